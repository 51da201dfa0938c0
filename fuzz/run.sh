#!/usr/bin/env bash
# Runs each fuzz target for a bounded time and exits non-zero if any of them finds a crash
# (a panic, a stack overflow, a timeout or running out of memory).
#
#   fuzz/run.sh                      # every target, 60 s each
#   fuzz/run.sh 300                  # every target, 300 s each
#   FUZZ_SECONDS=10 fuzz/run.sh provider_response
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Set FUZZ_TOOLCHAIN
# for another toolchain than `nightly`, FUZZ_SANITIZER=address to build with AddressSanitizer
# (reticent forbids `unsafe`, so the default is none, about eight times faster), FUZZ_ARGS for
# more libFuzzer flags. The corpus grows
# in fuzz/corpus/TARGET (seeded from fuzz/seeds/TARGET); a crashing input is written to
# fuzz/artifacts/TARGET, and `cargo +nightly fuzz run --fuzz-dir fuzz TARGET FILE` replays it.
set -euo pipefail

fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
seconds="${FUZZ_SECONDS:-60}"
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
    seconds="$1"
    shift
fi
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
    targets=(decode_arguments provider_response provider_stream)
fi
toolchain="${FUZZ_TOOLCHAIN:-nightly}"
sanitizer="${FUZZ_SANITIZER:-none}"

cd "$fuzz_dir/.."
failed=()
for target in "${targets[@]}"; do
    corpus="$fuzz_dir/corpus/$target"
    mkdir -p "$corpus"
    log="$(mktemp)"
    echo "== $target: ${seconds}s"
    set +e
    # shellcheck disable=SC2086
    cargo "+$toolchain" fuzz run --sanitizer "$sanitizer" --fuzz-dir "$fuzz_dir" --target-dir "$fuzz_dir/target" \
        "$target" "$corpus" "$fuzz_dir/seeds/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
        -dict="$fuzz_dir/json.dict" -print_final_stats=1 ${FUZZ_ARGS:-} 2>&1 \
        | tee "$log" | grep --line-buffered -E '^(Done |#[0-9]+ +(INITED|DONE)|SUMMARY|==[0-9]+== ?ERROR)'
    status=${PIPESTATUS[0]}
    set -e
    if [[ $status -ne 0 ]]; then
        failed+=("$target")
        tail -n 60 "$log"
    fi
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | sed "s/^/   $target /" || true
    rm -f "$log"
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "crashed: ${failed[*]} (inputs in $fuzz_dir/artifacts/)" >&2
    exit 1
fi
echo "no crashes"
