#!/bin/sh
# onic-replay from outside, on traces of a real MPI job: ONIC_TRACE=DIR gives
# one file per rank, onic-replay replays them together (both ranks, every
# engine finding the live entries), a bad parameter file and a bad queue
# kind are refused by name, a truncated copy is replayed up to its last
# record and the damage named by offset, an invalid ONIC_TRACE fails the job.
#   test_replay.sh ONICRUN MPI_TESTS ONIC_REPLAY
set -u
run=$1
mpi=$2
replay=$3
. "$(dirname "$0")/../launcher/check_lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

ONIC_TRACE=$dir go -n 2 "$mpi" unexpected
check "the traced job succeeds" [ $rc -eq 0 ]
check "one trace per rank" [ "$(ls "$dir"/*.trace | wc -l)" -eq 2 ]

"$replay" --depth "$dir" >"$out" 2>&1
rc=$?
check "onic-replay succeeds on the job's traces" [ $rc -eq 0 ]
check "both ranks are replayed" sh -c "grep -q 'rank 0 of 2' '$out' && grep -q 'rank 1 of 2' '$out'"
check "as one replay of 2 files" grep -q '^2 files' "$out"
check "the unexpected queue is in the depth histogram" grep -q 'unexpected' "$out"
check "every model and engine is reported" sh -c "grep -q 'model alpu' '$out' && grep -q 'model pim' '$out' && grep -q 'onic  wide' '$out'"
nic=$(sed -n 's/^  model nic *\([0-9]*\) .*/\1/p' "$out")

# --json: what the text says, for bench/replay/programs.py
"$replay" --quiet --depth --json "$dir/r.json" "$dir" >"$out" 2>&1
rc=$?
check "onic-replay --json succeeds" [ $rc -eq 0 ]
check "the JSON names both files and the longest queue" \
    sh -c "grep -q '\"files\": 2, ' '$dir/r.json' && grep -q '\"longest_queue\": [1-9]' '$dir/r.json'"
check "with the NIC model's lookups the text gives ($nic)" \
    sh -c "[ -n '$nic' ] && grep -q '{\"name\": \"nic\", \"lookups\": $nic, ' '$dir/r.json'"
check "the three timed models and every engine measured" [ "$(grep -c '\"mean_ns\"' "$dir/r.json")" -eq 7 ]
check "the ALPU and the PIM against the NIC processor" grep -q '"against_nic": {"alpu": [0-9.]*, "pim": [0-9.]*}' "$dir/r.json"
check "and the depth histogram by queue kind" \
    sh -c "grep -q '\"depth_kinds\": \[\"other\", \"posted\", \"overflow\", \"unexpected\"\]' '$dir/r.json' && grep -q '{\"length\": \"1\", \"lookups\": \[' '$dir/r.json'"
"$replay" --json /nonexistent-dir/r.json "$dir" >"$out" 2>&1
check "a JSON file that cannot be written fails, named" sh -c "[ $? -eq 1 ] && grep -q 'cannot write /nonexistent-dir/r.json' '$out'"

printf 'bus_ns = 20\nalpu_cells = lots\n' >"$dir/bad.conf"
"$replay" --params "$dir/bad.conf" "$dir" >"$out" 2>&1
rc=$?
check "a bad parameter file is refused" [ $rc -eq 2 ]
check "naming its line and parameter" grep -q 'bad.conf:2: invalid alpu_cells' "$out"
"$replay" --queues posted,bogus "$dir" >"$out" 2>&1
check "an unknown queue kind is refused by name" sh -c "[ $? -eq 2 ] && grep -q 'bogus' '$out'"

f=$(ls "$dir"/*.trace | head -1)
# Cut one byte off: every record takes at least 3 bytes, so the file's last
# record is cut; the rest are replayed and the cut one is named by offset.
recs() { sed -n 's/.* engine [a-z]*, \([0-9]*\) records.*/\1/p' "$1" | head -1; }
"$replay" --no-measure "$f" >"$out" 2>&1
whole=$(recs "$out")
size=$(stat -c %s "$f")
head -c $((size - 1)) "$f" >"$dir/cut.trace.bin"
"$replay" --no-measure "$dir/cut.trace.bin" >"$out" 2>&1
rc=$?
check "a truncated trace is replayed, exit 1" [ $rc -eq 1 ]
check "all its records but the cut one" [ "$(recs "$out")" = $((whole - 1)) ]
off=$(sed -n 's/.*truncated record at offset \([0-9]*\).*/\1/p' "$out" | head -1)
check "the truncation is named by offset, among the last bytes" \
    sh -c "[ -n '$off' ] && [ '$off' -gt 144 ] && [ '$off' -gt $((size - 80)) ] && [ '$off' -lt $((size - 1)) ]"
head -c 100 "$f" >"$dir/short.bin"
"$replay" "$dir/short.bin" >"$out" 2>&1
check "a file shorter than a header is refused at offset 0" sh -c "[ $? -eq 1 ] && grep -q 'offset 0' '$out'"

ONIC_TRACE="$dir/a b" go -n 1 "$mpi" setup
check "an invalid ONIC_TRACE fails the job, named" sh -c "[ $rc -ne 0 ] && grep -q 'ONIC_TRACE' '$out'"
check_end replay
