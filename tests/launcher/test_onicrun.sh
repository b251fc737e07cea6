#!/bin/sh
# onicrun's contract, observed from outside: exit codes, messages, how fast a
# failed job stops, and that no shared memory of a job is left behind.
#   test_onicrun.sh ONICRUN JOB_HELPER
set -u
run=$1
helper=$2
. "$(dirname "$0")/check_lib.sh"


no_job_shm() { # the job id from the helper's output
    job=$(grep -o 'onic-[0-9a-f]\{16\}' "$out" | head -1 | cut -c6-)
    [ -n "$job" ] && ! ls /dev/shm 2>/dev/null | grep -q "onic-$job"
}

# Usage errors exit 2.
go;                          check "no arguments: usage, exit 2" [ $rc -eq 2 ]
check "usage is printed" grep -q "usage: onicrun" "$out"
go -n 0 "$helper";           check "-n 0: exit 2" [ $rc -eq 2 ]
go -n 2;                     check "no program: exit 2" [ $rc -eq 2 ]
go -n 2 --frobnicate "$helper"; check "unknown option: exit 2" [ $rc -eq 2 ]
go -n 2 --bind socket "$helper"; check "bad --bind: exit 2" [ $rc -eq 2 ]
go -n 2 --timeout soon "$helper"; check "bad --timeout: exit 2" [ $rc -eq 2 ]
check "and says what is wrong" grep -q "timeout soon: expected" "$out"

# Ranks, size and one job id.
go -n 4 "$helper" env
check "4 processes exit 0" [ $rc -eq 0 ]
check "ranks 0-3 each once" [ "$(grep -o 'rank [0-9]*' "$out" | sort | tr '\n' ' ')" = "rank 0 rank 1 rank 2 rank 3 " ]
check "one job id" [ "$(grep -o 'job [0-9a-f]*' "$out" | sort -u | wc -l)" -eq 1 ]
go -n 2 "$helper" env; first=$(grep -o 'job [0-9a-f]*' "$out" | head -1)
go -n 2 "$helper" env; check "a fresh job id per run" [ "$first" != "$(grep -o 'job [0-9a-f]*' "$out" | head -1)" ]

# A failure stops the job within a second, names the rank, and fails.
go -n 3 "$helper" exit 1
check "exit 3 of rank 1 is onicrun's status" [ $rc -eq 3 ]
check "the failing rank is named" grep -q "rank 1 (pid [0-9]*) exited with status 3" "$out"
check "the job stopped within 2 s" [ $secs -le 2 ]
go -n 2 "$helper" abort 0
check "abort fails the job" [ $rc -eq 134 ]
check "the signal is named" grep -q "rank 0 (pid [0-9]*) was killed by signal 6" "$out"
go -n 4 "$helper" kill 3
check "SIGKILL fails the job" [ $rc -eq 137 ] && check "in time" [ $secs -le 2 ]
go -n 3 "$helper" stubborn
check "processes ignoring SIGTERM are killed" [ $rc -eq 1 ] && check "within 2 s" [ $secs -le 2 ]

# Shared memory of the job is removed, even when its owner died by SIGKILL.
go -n 2 "$helper" shm 1
check "a process killed holding shm fails the job" [ $rc -eq 137 ]
check "both processes created a shm object" [ "$(grep -c "/onic-[0-9a-f]*-test-[01]" "$out")" -eq 2 ]
check "no shm object of the job is left" no_job_shm

# Timeout.
go -n 2 --timeout 0.5 "$helper" sleep
check "timeout exits 124" [ $rc -eq 124 ] && check "soon after the timeout" [ $secs -le 2 ]
check "timeout is reported" grep -q "did not finish within 0.5 s" "$out"

# A program that cannot be started.
go -n 2 /nonexistent/program
check "a missing program fails with 127" [ $rc -eq 127 ]
check "and says so" grep -q "cannot run /nonexistent/program" "$out"

# SIGTERM to onicrun reaches the job.
"$run" -n 2 "$helper" sleep >"$out" 2>&1 &
pid=$!
sleep 0.3
kill -TERM $pid
t0=$(date +%s)
wait $pid
rc=$?
check "SIGTERM to onicrun: exit 143" [ $rc -eq 143 ]
check "promptly" [ $(( $(date +%s) - t0 )) -le 2 ]
check "no helper left running" sh -c "! pgrep -f -x '$helper sleep' >/dev/null"

# Other signals are forwarded too, and never leave the job behind.
"$run" -n 2 "$helper" sleep >"$out" 2>&1 &
pid=$!
sleep 0.3
kill -USR1 $pid
wait $pid
rc=$?
check "SIGUSR1 to onicrun is forwarded: exit 138" [ $rc -eq 138 ]
check "no helper left after SIGUSR1" sh -c "! pgrep -f -x '$helper sleep' >/dev/null"

# If onicrun itself is killed, its processes die with it.
"$run" -n 2 "$helper" sleep >"$out" 2>&1 &
pid=$!
sleep 0.3
kill -KILL $pid
wait $pid 2>/dev/null
sleep 0.3
check "no helper outlives a SIGKILLed onicrun" sh -c "! pgrep -f -x '$helper sleep' >/dev/null"

# Standard input goes to rank 0 only.
echo hello | "$run" -n 3 cat >"$out" 2>&1
check "stdin reaches exactly one rank" [ "$(grep -c hello "$out")" -eq 1 ]

# Binding: with --bind none a process keeps the launcher's CPUs; with
# --bind core, on a machine of two or more cores, ranks 0 and 1 get
# different cores, each with fewer CPUs than the machine.
mine=$(nproc)
go -n 1 --bind none "$helper" cpus
check "--bind none leaves every CPU" [ "$(cut -d' ' -f1 "$out")" -eq "$mine" ]
go -n 2 --bind core "$helper" cpus
check "--bind core runs" [ $rc -eq 0 ]
cores=$(lscpu -p=CORE 2>/dev/null | grep -v '^#' | sort -u | wc -l)
if [ "$cores" -ge 2 ] && [ "$mine" -eq "$(getconf _NPROCESSORS_ONLN)" ]; then
    check "--bind core: fewer CPUs than the machine" [ "$(cut -d' ' -f1 "$out" | sort -n | tail -1)" -lt "$mine" ]
    check "--bind core: ranks on different cores" [ "$(cut -d' ' -f2 "$out" | sort -u | wc -l)" -eq 2 ]
else
    echo "onicrun: one core or a restricted cpuset here: --bind core placement not checked"
fi

check_end onicrun
