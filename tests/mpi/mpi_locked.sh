#!/bin/sh
# Every MPI call holds the process's lock under MPI_THREAD_MULTIPLE: its
# body starts with ONIC_MPI_LOCKED, or for a hot call ONIC_MPI_LOCKED_VIA
# (src/mpi/mpi_impl.h, "Threads"). A call
# without it races with the other threads' calls, which only a run that
# happens to call it from two threads at once under ThreadSanitizer would
# show. Exempt: what touches no state of the library (handle conversions,
# the clock, address arithmetic) and MPI_Init/MPI_Init_thread (no other
# thread may call MPI before they return).
# usage: mpi_locked.sh SRC_DIR
set -eu
exempt=" MPI_Aint_add MPI_Aint_diff MPI_Wtime MPI_Wtick MPI_Message_c2f MPI_Message_f2c MPI_Session_c2f MPI_Session_f2c MPI_Init MPI_Init_thread "
bad=0
n=0
for f in "$1"/src/mpi/*.c; do
    out=$(awk -v exempt="$exempt" '
        # A definition: a line that names MPI_X( at its start (after a type
        # and attributes) and is no declaration; its body opens at the
        # first line that is "{".
        /^[A-Za-z_].*[ *]MPI_[A-Za-z0-9_]+\(/ && !/;[ \t]*$/ && !/^[ \t]/ {
            match($0, /MPI_[A-Za-z0-9_]+\(/)
            name = substr($0, RSTART, RLENGTH - 1)
            want = index(exempt, " " name " ") == 0
            pending = 1
            next
        }
        pending && /^\{/ { inbody = 1; pending = 0; next }
        inbody {
            if (want) print ($0 ~ /^    ONIC_MPI_LOCKED(;|_VIA\(mpi_[a-z_]+_locked\()/ ? "ok " : "missing ") name " " FILENAME ":" FNR
            inbody = 0
        }' "$f")
    n=$((n + $(printf '%s\n' "$out" | grep -c '^ok ' || true)))
    if printf '%s\n' "$out" | grep -q '^missing '; then
        printf '%s\n' "$out" | grep '^missing ' | sed 's/^missing /no ONIC_MPI_LOCKED first in /'
        bad=1
    fi
done
echo "$n MPI calls take the lock"
# A parse that found nothing would pass vacuously.
[ "$n" -ge 250 ] || { echo "only $n calls found: the parse is broken"; exit 1; }
exit $bad
