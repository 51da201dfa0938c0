#!/usr/bin/env bash
# Instructions per provider round trip (an OpenAI response body read, its tool call run, the
# output rendered), counted by callgrind. Needs valgrind.
#
#   runtime/benches/round_trip.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-20000}"
cargo bench -q -p reticent --features openai --bench provider_round_trip --no-run
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/provider_round_trip-* | grep -v '\.d$' | head -n 1)
declare -A total
for mode in inputs parse round_trip; do
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$mode" "$n" 2>&1)
  total[$mode]=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
done
per() { echo $(( (${total[$1]} - ${total[inputs]}) / n )); }
echo "instructions per body, the bodies made and dropped subtracted (N=$n):"
echo "  read the response:                        $(per parse)"
echo "  read it, run the tool call, render output: $(per round_trip)"
for mode in parse round_trip; do
  ROUND_TRIP_TIME=1 "$bin" "$mode" "$n" >/dev/null
done
