#!/bin/sh
# What the test suite leaves in /dev/shm.
#   shm_ledger.sh begin LEDGER  record the onic-* objects there now
#   shm_ledger.sh end LEDGER    fail if an onic-* object appeared since and
#                               no process uses it; remove those objects
# ctest runs `begin` before every test and `end` after all of them (the
# fixture in tests/CMakeLists.txt). Objects that were there before, and
# objects a running process maps or holds open (another suite's job on
# this machine), are not ours to judge. A test killed by ctest's timeout
# (SIGKILL: onicrun cannot clean up) leaves its job's objects: `end` names
# them, fails, and removes them, so they do not pile up run after run.
set -u
mode=$1
ledger=$2
dir=/dev/shm

list() { ls "$dir" 2>/dev/null | grep '^onic-' | sort; }

# Whether a live process maps or holds open /dev/shm/NAME.
in_use() {
    for p in /proc/[0-9]*; do
        grep -qF "$dir/$1" "$p/maps" 2>/dev/null && return 0
        ls -l "$p/fd" 2>/dev/null | grep -qF "$dir/$1" && return 0
    done
    return 1
}

# New since `begin` and used by no process.
orphans() {
    list | comm -13 "$ledger" - | while read -r name; do
        in_use "$name" || echo "$name"
    done
}

case $mode in
begin)
    list >"$ledger"
    echo "shm_ledger: $(wc -l <"$ledger") onic-* objects in $dir before the suite"
    ;;
end)
    if [ ! -f "$ledger" ]; then
        echo "shm_ledger: no ledger $ledger (was the begin test run?)"
        exit 1
    fi
    first=$(orphans)
    if [ -z "$first" ]; then
        echo "shm_ledger: nothing left in $dir"
        exit 0
    fi
    # A job of another suite may be between creating an object and mapping
    # it: only what is still there, unused, a second later is left over.
    sleep 1
    left=$(orphans | grep -xF "$first")
    if [ -z "$left" ]; then
        echo "shm_ledger: nothing left in $dir"
        exit 0
    fi
    echo "shm_ledger: left in $dir by the suite (removed now):"
    echo "$left" | sed 's/^/  /'
    echo "$left" | while read -r name; do rm -f "$dir/$name"; done
    exit 1
    ;;
*)
    echo "usage: shm_ledger.sh begin|end LEDGER" >&2
    exit 2
    ;;
esac
