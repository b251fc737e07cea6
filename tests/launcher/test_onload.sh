#!/bin/sh
# onicrun --onload, observed from outside: the engine is ready before the
# processes start (they see it running in onic-info), pinned away from them,
# stopped after them, its death stops the job, nothing of it is left, an
# MPI program runs through it, and one whose engine is killed gets an error
# from its next call instead of hanging.
#   test_onload.sh ONICRUN ONIC_INFO JOB_HELPER MPI_TESTS ONLOAD_JOB MPI_ONLOAD
set -u
run=$1
info=$2
helper=$3
mpi=$4
onload_job=$5
mpi_onload=$6
. "$(dirname "$0")/check_lib.sh"

engine_pid() { sed -n 's/.*running for job [0-9a-f]*: pid \([0-9]*\).*/\1/p' "$out" | head -1; }
job_id() { sed -n 's/.* for job \([0-9a-f]*\).*/\1/p' "$out" | head -1; }
no_job_shm() { job=$(job_id); [ -n "$job" ] && ! ls /dev/shm 2>/dev/null | grep -q "onic-$job"; }

# Without the flag nothing changes: no engine.
go -n 1 "$info"
check "without --onload: no engine" grep -q "none for job" "$out"

# With it, the engine runs before the processes and is gone after them.
go --onload -n 2 "$info"
check "--onload: the job succeeds" [ $rc -eq 0 ]
check "both processes see a running engine" [ "$(grep -c 'running for job' "$out")" -eq 2 ]
pid=$(engine_pid)
check "the engine is stopped after the job" sh -c "[ -n '$pid' ] && ! kill -0 '$pid' 2>/dev/null"
check "its status segment is removed" no_job_shm
ONIC_ONLOAD=1 go -n 1 "$info"
check "ONIC_ONLOAD=1 does the same" grep -q "running for job" "$out"

# Pinned to the last core by default, to ONIC_ONLOAD_CORE if set; with
# --bind core the processes get the other cores (all, the engine's last,
# when they are more than the others).
cores=$(lscpu -p=CORE 2>/dev/null | grep -v '^#' | sort -u | wc -l)
if [ "$cores" -ge 2 ] && [ "$(nproc)" -eq "$(getconf _NPROCESSORS_ONLN)" ]; then
    go --onload -n 1 "$info"
    check "the engine is on the last core" grep -q "core $((cores - 1)), up" "$out"
    ONIC_ONLOAD_CORE=0 go --onload -n 1 "$info"
    check "ONIC_ONLOAD_CORE=0 moves it" grep -q "core 0, up" "$out"
    ONIC_ONLOAD_CORE=0 go --onload --bind core -n 1 "$helper" cpus
    check "--bind core keeps the process off the engine's core" \
        [ "$(cut -d' ' -f2 "$out")" != "0" ]
    # More ranks than other cores: they take every core, the engine's last,
    # so rank 0 still has one to itself.
    go --onload --bind core -n "$cores" sh -c "[ \$ONIC_RANK != 0 ] || exec '$helper' cpus"
    check "more ranks than other cores: rank 0 still off the engine's core" \
        [ "$(grep -v '^onicrun:' "$out" | cut -d' ' -f2)" = "0" ]
else
    echo "onload: one core or a restricted cpuset here: placement not checked"
fi
ONIC_ONLOAD_CORE=4095 go --onload -n 1 "$helper" env
check "a core the machine lacks: refused" [ $rc -ne 0 ]
check "naming the variable" grep -q "ONIC_ONLOAD_CORE=4095" "$out"
ONIC_ONLOAD=yes go -n 1 "$helper" env
check "an invalid ONIC_ONLOAD: usage error" [ $rc -eq 2 ]
check "naming the variable" grep -q 'invalid ONIC_ONLOAD="yes"' "$out"

# The engine killed while the job runs: the job stops, while its processes
# still sleep (none gets to say it slept), and fails.
go --onload -n 2 sh -c "
    pid=\$('$info' | sed -n 's/.*running for job [0-9a-f]*: pid \\([0-9]*\\).*/\\1/p')
    [ \"\$ONIC_RANK\" = 0 ] && '$info' | grep 'for job' && kill -KILL \$pid
    sleep 15; echo rank \$ONIC_RANK slept"
check "a killed engine fails the job" [ $rc -eq 137 ]
check "and says so" grep -q "the onload engine (pid [0-9]*) was killed by signal 9; stopping the job" "$out"
check "its processes are stopped, not left to finish" sh -c "! grep -q 'rank [0-9] slept' '$out'"
check "nothing of the job is left in /dev/shm" no_job_shm

# Processes blocked waiting for their engine get an error when it dies.
go --onload -n 2 "$onload_job" killed
# 137, not 124: the engine's death stopped the job, not the 20 s limit.
check "the job fails with the engine's signal" [ $rc -eq 137 ]
check "rank 0, blocked in a wait, gets an error, not a hang" \
    grep -q "rank 0: waiting for an event: input/output error after [0-9]* ms" "$out"

# The same with the engine left a zombie (onicrun stopped, so it cannot
# reap it): kill(pid, 0) finds a zombie, the engine is gone all the same.
go --onload -n 1 "$onload_job" killed zombie
check "a zombie engine: its status reads not running" \
    grep -q "rank 0: the engine is a zombie; its status says not running" "$out"
check "a zombie engine: rank 0's wait gets an error, not a timeout" \
    grep -q "rank 0: waiting for an event: input/output error after [0-9]* ms" "$out"
check "a zombie engine: the job fails with the engine's signal" [ $rc -eq 137 ]

# A process that exits without detaching is no longer served, and the
# others still are.
go --onload -n 2 "$onload_job" vanish
check "a vanished process: the job goes on" [ $rc -eq 0 ]
check "the engine drops it" grep -q "rank 0: the engine stopped serving the vanished process" "$out"
check "and serves the other" grep -q "rank 0: 1000 pings answered in order" "$out"
# Also when it stays a zombie (rank 0 stops onicrun before rank 1 exits).
go --onload -n 2 "$onload_job" vanish zombie
check "a zombie process: the job goes on" [ $rc -eq 0 ]
check "the engine drops the zombie" \
    grep -q "rank 0: the engine stopped serving the vanished process" "$out"
check "and serves the other still" grep -q "rank 0: 1000 pings answered in order" "$out"

# What a process must not get away with; a segment that does not add up.
go --onload -n 1 "$onload_job" misuse
check "misuse is refused, one by one" grep -q "rank 0: every misuse refused" "$out"
check "a senseless command is named" grep -q "command 99 of 0 bytes from pid [0-9]* makes no sense" "$out"
go --onload -n 2 "$onload_job" badseg
check "a bad segment: the job goes on" [ $rc -eq 0 ]
check "the engine refuses it" grep -q "does not describe the segment" "$out"
check "and serves the good process" grep -q "rank 0: 1000 pings answered in order" "$out"
check "whose pulls go on meanwhile" grep -q "rank 0: [0-9]* pulls from itself while" "$out"

# onic-info shows the engine's counters moving.
# Each process's exit status is its program's: a failed pull fails the job.
go --onload -n 2 sh -c "'$onload_job' pull 1048576 || exit; [ \$ONIC_RANK != 1 ] || exec '$info'"
check "the pulls succeed" [ $rc -eq 0 ]
check "onic-info counts the bytes the engine moved" grep -q "bytes moved 10[0-9]\{5\}" "$out"
check "and the commands it took" grep -q "commands [1-9][0-9]*, matches" "$out"

# An MPI program runs through the engine, which then counts its work.
go --onload -n 2 sh -c "'$mpi' setup order || exit; [ \$ONIC_RANK != 1 ] || exec '$info'"
check "MPI under --onload: the job succeeds" [ $rc -eq 0 ]
check "the engine matched its messages" grep -q "matches [1-9][0-9]*, bytes moved" "$out"

# MPI processes whose engine is killed get an error, not a hang.
go --onload -n 2 "$mpi_onload" killed
check "an MPI job whose engine is killed fails" [ $rc -ne 0 ]
check "its processes are told the engine is gone" \
    grep -q "the onload engine serving this process is gone" "$out"
check "no MPI process hangs (the 20 s limit did not stop it)" [ $rc -ne 124 ]
check "nothing of the MPI job is left in /dev/shm" no_job_shm

check_end onload
