#!/usr/bin/env bash
# Instructions per call of `Tool::call` against the hand-written serde floor, of
# `Tool::call_text` against the floor from JSON text, of the failure path against the
# success path, and of the same tool with constraints in its schema (which its call checks)
# against it, and of a whole `Agent::run` of one tool round trip (the `agent` row: compare it
# with the same script on another version), counted by callgrind: exact and repeatable,
# unlike time on a shared machine.
# Needs valgrind (Debian: apt-get install valgrind).
#
#   runtime/benches/instructions.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
n="${1:-20000}"
cargo bench -q -p reticent --bench dispatch_count --no-run
bin=$(ls -t "${CARGO_TARGET_DIR:-target}"/release/deps/dispatch_count-* | grep -v '\.d$' | head -n 1)
declare -A total
for mode in inputs floor tool failure floor_text text limited limited_text agent; do
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$mode" "$n" 2>&1)
  total[$mode]=$(echo "$out" | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
done
per() { echo $(( (${total[$1]} - ${total[inputs]}) / n )); }
floor=$(per floor); tool=$(per tool); failure=$(per failure)
floor_text=$(per floor_text); text=$(per text)
limited=$(per limited); limited_text=$(per limited_text); agent=$(per agent)
echo "instructions per call, inputs made and dropped in every mode subtracted (N=$n):"
echo "  floor (derive(Deserialize) + from_value + call + to_value): $floor"
echo "  Tool::call, success:                                      $tool"
echo "  Tool::call, failure classified and rendered:              $failure"
echo "  floor from text (from_str into the struct + call + to_value): $floor_text"
echo "  Tool::call_text, success:                                 $text"
echo "  Tool::call, constraints checked (book_limited):           $limited"
echo "  Tool::call_text, constraints checked (book_limited):      $limited_text"
echo "  Agent::run, one round trip, output within its budget:     $agent"
awk -v t="$tool" -v f="$floor" -v e="$failure" -v ft="$floor_text" -v x="$text" \
  -v l="$limited" -v lx="$limited_text" 'BEGIN {
  printf "  Tool::call / floor:            %.3fx\n", t / f
  printf "  Tool::call_text / floor_text:  %.3fx\n", x / ft
  printf "  failure / success:             %.3fx\n", e / t
  printf "  checked / unchecked call:      %.3fx\n", l / t
  printf "  checked / unchecked call_text: %.3fx\n", lx / x
}'
