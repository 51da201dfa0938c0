#!/usr/bin/env bash
# Instructions per `tools/call` of reticent's `McpServer` against rmcp's own
# `#[tool_router]` + `#[tool_handler]` server for the same tool, with text output and with
# structured output, and of the text tool called by a bare handler (what the server adds is
# reticent's count against it), counted by callgrind: exact and repeatable, unlike time on a
# shared machine. Needs valgrind (Debian: apt-get install valgrind).
#
#   runtime/benches/mcp_instructions.sh [N]
#
# With PROFILE=1 it also writes $CARGO_TARGET_DIR/callgrind.mcp_call.MODE.out for each mode, for
# `callgrind_annotate --inclusive=yes FILE`: the cost per function.
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-20000}"
target="${CARGO_TARGET_DIR:-target}"
cargo bench -q -p reticent --features mcp --bench mcp_call --no-run
bin=$(ls -t "$target"/release/deps/mcp_call-* | grep -v '\.d$' | head -n 1)
declare -A total
modes=(inputs rmcp reticent rmcp_structured reticent_structured bare)
for mode in "${modes[@]}"; do
  out_file=/dev/null
  if [[ "${PROFILE:-0}" == 1 && "$mode" != inputs ]]; then
    out_file="$target/callgrind.mcp_call.$mode.out"
  fi
  out=$(valgrind --tool=callgrind --callgrind-out-file="$out_file" "$bin" count "$mode" "$n" 2>&1)
  total[$mode]=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
done
per() { echo $(( (${total[$1]} - ${total[inputs]}) / n )); }
echo "instructions per tools/call, the requests made and dropped in every mode subtracted (N=$n):"
for output in "" _structured; do
  rmcp=$(per "rmcp$output"); reticent=$(per "reticent$output")
  label=${output:+structured output}; label=${label:-text output}
  echo "  $label:"
  echo "    rmcp #[tool_router] + #[tool_handler]: $rmcp"
  echo "    reticent McpServer:                    $reticent"
  awk -v a="$reticent" -v b="$rmcp" 'BEGIN { printf "    reticent / rmcp:                       %.3fx\n", a / b }'
done
bare=$(per bare); reticent=$(per reticent)
echo "  the text tool called by a bare handler (no lookup, span, clock or containment): $bare"
awk -v a="$reticent" -v b="$bare" 'BEGIN { printf "    McpServer / bare handler:              %.3fx\n", a / b }'
