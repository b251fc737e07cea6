#!/bin/sh
# Nothing of a running job has a name in /dev/shm, at any moment: a watcher
# (shm_watch, inotify on /dev/shm, as a process racing for the names would
# use) runs around each job and must see no onic-<job> object created, and
# the job's ranks (noname_job) list /dev/shm while they run and find none of
# theirs, and find their shared memory mapped as nameless memfds.
#   test_noname.sh ONICRUN SHM_WATCH NONAME_JOB
set -u
run=$1
watch=$2
job=$3
. "$(dirname "$(readlink -f "$0")")/check_lib.sh"

job_id() { sed -n 's/^job \([0-9a-f]*\)$/\1/p' "$out" | head -1; }
# The watcher saw no object of this job created.
unseen() { id=$(job_id); [ -n "$id" ] && ! grep -q "shm_watch: created onic-$id" "$out"; }
ranks_ok() { [ "$(grep -c "^rank [0-9]*: nothing in /dev/shm" "$out")" -eq "$1" ]; }

go_watched() { t0=$(date +%s%N); timeout 30 "$watch" "$run" "$@" >"$out" 2>&1; rc=$?; }

go_watched -n 4 --timeout 25 "$job"
check "4 ranks: the job succeeds (rc $rc)" [ $rc -eq 0 ]
check "4 ranks: each finds nothing of the job in /dev/shm, and its regions nameless" ranks_ok 4
check "4 ranks: no object of the job was ever created in /dev/shm" unseen

ONIC_NODES=2 go_watched -n 4 --timeout 25 "$job"
check "2 nodes of 2 (onicrun's store in use): the job succeeds (rc $rc)" [ $rc -eq 0 ]
check "2 nodes of 2: no object of the job was ever created in /dev/shm" unseen

ONIC_ONLOAD_SHARED=engine go_watched --onload -n 2 --timeout 25 "$job"
check "--onload: the job succeeds (rc $rc)" [ $rc -eq 0 ]
check "--onload: each finds nothing in /dev/shm, and its segments nameless" ranks_ok 2
check "--onload: no object of the job or its engine was ever created in /dev/shm" unseen
check_end test_noname
