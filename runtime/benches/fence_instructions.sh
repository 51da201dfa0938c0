#!/usr/bin/env bash
# Instructions per round trip of the agent loop (a model turn and one tool call) with a trusted
# tool, with an untrusted tool whose output is fenced, and with the same untrusted tool and the
# fence turned off, counted by callgrind: what the fence costs where it applies, and that a
# trusted tool's round trip pays nothing for it. Needs valgrind.
#
#   runtime/benches/fence_instructions.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-200}"
round_trips=50
cargo bench -q -p reticent --bench fence_count --no-run
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/fence_count-* | grep -v '\.d$' | head -n 1)
declare -A total
for mode in build trusted fenced unfenced; do
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$mode" "$n" 2>&1)
  total[$mode]=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
done
per() { echo $(( (${total[$1]} - ${total[build]}) / (n * round_trips) )); }
trusted=$(per trusted); fenced=$(per fenced); unfenced=$(per unfenced)
echo "instructions per round trip, building the agents subtracted (N=$n runs of $round_trips):"
echo "  trusted tool:                  $trusted"
echo "  untrusted tool, fenced:        $fenced"
echo "  untrusted tool, fence off:     $unfenced"
awk -v t="$trusted" -v f="$fenced" -v u="$unfenced" 'BEGIN {
  printf "  fenced / fence off:            %.3fx\n", f / u
  printf "  trusted / untrusted fence off: %.3fx\n", t / u
}'
