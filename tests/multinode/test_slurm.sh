#!/bin/bash
# The MPI test suite across two "hosts" (netns_lib.sh: network namespaces A
# and B joined by a veth pair) under Slurm's `srun --mpi=pmix`: a throwaway
# cluster made by this script -- slurm.conf, state, spool, logs all in its
# temporary directory, slurmctld and a slurmd on A, a slurmd on B, each
# under its host's name, no munge (auth/none), no cgroups, no accounting --
# and removed with the namespaces.
#   test_slurm.sh MPI_TESTS
# Runs the suite with -N 2 -n 2 and -N 2 -n 4 and checks that every rank
# took its rank from Slurm's PMIx server and reached the other host by ofi;
# then a few of the tests with --mpi=pmi2 -N 2 -n 4 (onic's PMI-1
# bootstrap).
# Exit 77 (skipped) where Slurm or its PMIx plugin is not installed or
# namespaces cannot be made; a cluster that does not come up is a failure,
# with the daemons' logs.
set -u
tests=$1 fail=0
export PATH=$PATH:/usr/sbin:/sbin
for tool in srun sinfo slurmctld slurmd; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "skip: Slurm is not installed ($tool not found; apt-get install slurm-wlm)"
        exit 77
    fi
done
source "$(dirname "$0")/netns_lib.sh"

# Every Slurm command and daemon reads this file, not /etc/slurm; a job or
# launcher this script runs under is not the one it makes.
for v in $(compgen -e | grep -E '^(SLURM_|PMIX_|PMI_)'); do unset "$v"; done
export SLURM_CONF=$tmp/slurm.conf
mkdir -p "$tmp/ctld" "$tmp/$A/spool" "$tmp/$A/tmp" "$tmp/$B/spool" "$tmp/$B/tmp"
: > "$tmp/plugstack.conf"
# slurmd loads a cgroup plugin even when nothing uses cgroups; inside the
# namespace (a fresh /sys) there are none to detect, so name one.
echo "CgroupPlugin=cgroup/v1" > "$tmp/cgroup.conf"
# Each namespace has its own ports: Slurm's defaults are free there. Two
# CPUs a host whatever the machine has (config_overrides: a node is what
# this file says), room for -n 4 on two hosts.
cat > "$SLURM_CONF" <<EOS
ClusterName=onic
SlurmctldHost=$A(198.18.8.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$tmp/ctld
SlurmctldPidFile=$tmp/ctld/slurmctld.pid
SlurmctldLogFile=$tmp/ctld/slurmctld.log
SlurmdSpoolDir=$tmp/%n/spool
SlurmdPidFile=$tmp/%n/slurmd.pid
SlurmdLogFile=$tmp/%n/slurmd.log
TmpFS=$tmp/%n/tmp
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=info
SlurmdParameters=config_overrides
NodeName=$A NodeAddr=198.18.8.1 CPUs=2 State=UNKNOWN
NodeName=$B NodeAddr=198.18.8.2 CPUs=2 State=UNKNOWN
PartitionName=onic Nodes=$A,$B Default=YES MaxTime=INFINITE State=UP
EOS

if ! "$tmp/on_a" srun --mpi=list 2>&1 | grep -qw pmix; then
    echo "skip: Slurm's PMIx plugin (mpi_pmix) is not installed"
    exit 77
fi

logs() { # each daemon's log, or what it said before it had one
    for d in ctld/slurmctld "$A/slurmd" "$B/slurmd"; do
        echo "--- $d"
        if [ -s "$tmp/$d.log" ]; then tail -15 "$tmp/$d.log"; else tail -15 "$tmp/${d%/*}/out"; fi
    done
}

# The daemons, in the foreground of their namespaces. At the end they are
# asked to stop and given a few seconds, then the cleanup kills whatever is
# left in the namespaces.
stop_slurm() {
    "$tmp/on_a" timeout 5 scontrol shutdown >/dev/null 2>&1
    for _ in $(seq 20); do
        [ -z "$(ip netns pids "$A"; ip netns pids "$B")" ] && break
        sleep 0.25
    done
    cleanup
}
trap stop_slurm EXIT INT TERM
"$tmp/on_a" slurmctld -D >"$tmp/ctld/out" 2>&1 &
daemons=$!
"$tmp/on_a" slurmd -D >"$tmp/$A/out" 2>&1 &
daemons="$daemons $!"
"$tmp/nsrsh" 198.18.8.2 slurmd -D >"$tmp/$B/out" 2>&1 &
daemons="$daemons $!"
# Up when both nodes have registered and are idle: 30 s at most, less if a
# daemon has exited.
up=0 SECONDS=0
while [ "$SECONDS" -lt 30 ]; do
    if [ "$("$tmp/on_a" timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" -eq 2 ]; then
        up=1; break
    fi
    for pid in $daemons; do kill -0 "$pid" 2>/dev/null || break 2; done
    sleep 0.5
done
if [ "$up" -ne 1 ]; then
    echo "FAIL: the Slurm cluster did not come up (both nodes idle) in $SECONDS s"
    "$tmp/on_a" timeout 5 sinfo -N 2>&1
    logs
    exit 1
fi
echo "ok: slurmctld and two slurmd up in $SECONDS s: $("$tmp/on_a" sinfo -h -N -o '%N %t' | tr '\n' ' ')"

# As test_netns.sh: ranks on one host by shm, across by ofi over tcp on the
# veth pair. ONIC_LOG=debug makes each rank say where its rank came from.
export FI_PROVIDER=tcp FI_TCP_IFACE=onic0 ONIC_LOG=debug
run() { # mpi-plugin onic-bootstrap nodes tasks mpi_tests-tests...
    local name="srun --mpi=$1 -N $3 -n $4: mpi_tests ${*:5}" out got
    local boot=$2 n=$4 per=$(($4 / $3))
    out=$(timeout 120 "$tmp/on_a" srun --mpi="$1" -N "$3" -n "$n" --kill-on-bad-exit=1 \
          "$tests" "${@:5}" 2>&1)
    got=$?
    if [ "$got" -eq 124 ]; then
        echo "FAIL: $name: hung (killed after 120 s)"; echo "$out" | tail -8; fail=1; return
    elif [ "$got" -ne 0 ]; then
        echo "FAIL: $name: exit status $got"; echo "$out" | grep -v "debug: mpi:" | tail -15
        fail=1; return
    elif ! echo "$out" | grep -q "^PASS: 0 failed checks over $n processes$"; then
        echo "FAIL: $name: no \"PASS: 0 failed checks over $n processes\""
        echo "$out" | grep -v "debug: mpi:" | tail -15; fail=1; return
    elif echo "$out" | grep -q "onic\[[0-9]*\] error:"; then
        echo "FAIL: $name: passed, but logged an error"; echo "$out" | grep "error:" | head -5
        fail=1; return
    fi
    # Rank, size and the ranks on its host from Slurm's server (PMIx:
    # PMIX_NAMESPACE set; pmi2: PMI_FD, spoken to as PMI-1); the other host
    # by ofi.
    for r in $(seq 0 $((n - 1))); do
        if ! echo "$out" | grep -q "debug: boot: $boot: rank $r of $n, $per on this node" ||
           ! echo "$out" | grep -q "debug: xport: rank $r reaches $((per - 1)) ranks by shm and $((n - per)) by ofi"; then
            echo "FAIL: $name: rank $r did not start through $boot with $per ranks on each host"
            echo "$out" | grep "debug: \(boot\|xport\)"; fail=1; return
        fi
    done
    echo "ok: $name (rank from $boot, shm on a host, ofi across)"
}
run pmix pmix 2 2 all
run pmix pmix 2 4 all
# The README's other srun line: the bootstrap and a few tests, the rest is
# what the runs above cover.
if "$tmp/on_a" srun --mpi=list 2>&1 | grep -qw pmi2; then
    run pmi2 pmi1 2 4 setup order coll
else
    echo "skip: srun --mpi=pmi2: Slurm's pmi2 plugin is not installed"
fi
[ "$fail" -ne 0 ] && logs
exit $fail
