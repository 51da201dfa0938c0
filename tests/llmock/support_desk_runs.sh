#!/usr/bin/env bash
# Streamed support_desk runs against llmock with injected faults, for each of OpenAI and
# Anthropic: how many complete on the default budget, and llmock's verdict of each run (its
# journal reset in between).
#
#   cargo build -p reticent-examples --example support_desk
#   RETICENT_LLMOCK_PYTHON=target/llmock-venv/bin/python tests/llmock/support_desk_runs.sh 20 \
#     --error-rate-429 0.05 --error-rate-503 0.05 \
#     --stream-fault truncate=0.05 --stream-fault disconnect=0.05
set -u
cd "$(dirname "$0")/../.."
runs=$1
shift
python="${RETICENT_LLMOCK_PYTHON:?set RETICENT_LLMOCK_PYTHON to the python of the llmock venv}"
bin="${CARGO_TARGET_DIR:-target}/debug/examples/support_desk"
port=$((20000 + RANDOM % 20000))
out="$(mktemp -d)"
"$python" -m llmock.cli serve --host 127.0.0.1 --port "$port" --log-level warning "$@" \
    >"$out/llmock.log" 2>&1 &
server=$!
trap 'kill $server' EXIT
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 0.2
done
for provider in openai anthropic; do
    completed=0
    for i in $(seq "$runs"); do
        curl -sf -X POST "http://127.0.0.1:$port/_llmock/reset" >/dev/null
        case $provider in
        openai) env RETICENT_MODEL=openai:gpt-4o-mini OPENAI_API_KEY=sk-llmock \
            OPENAI_BASE_URL="http://127.0.0.1:$port/v1" timeout 600 "$bin" >"$out/$provider-$i.out" 2>&1 ;;
        anthropic) env RETICENT_MODEL=anthropic:claude-sonnet-4-5 ANTHROPIC_API_KEY=sk-ant-llmock \
            ANTHROPIC_BASE_URL="http://127.0.0.1:$port/anthropic" timeout 600 "$bin" >"$out/$provider-$i.out" 2>&1 ;;
        esac
        status=$?
        verdict=$(curl -sf "http://127.0.0.1:$port/_llmock/verdict" | "$python" -c \
            'import json,sys; v=json.load(sys.stdin); print("PASS" if v["passed"] else "FAIL " + ",".join(f["code"] for f in v["findings"] if f["severity"] == "error"))')
        restarts=$(grep -c "the answer broke off" "$out/$provider-$i.out")
        echo "$provider run $i: exit $status, verdict $verdict, turns restarted $restarts"
        [ "$status" = 0 ] && completed=$((completed + 1))
    done
    echo "== $provider: $completed of $runs runs completed (outputs in $out)"
done
