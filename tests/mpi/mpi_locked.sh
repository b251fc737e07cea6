#!/bin/sh
# Every MPI call holds the process's lock under MPI_THREAD_MULTIPLE: its
# body starts with ONIC_MPI_LOCKED, or for a hot call ONIC_MPI_LOCKED_VIA
# (src/mpi/mpi_impl.h, "Threads"). A call
# without it races with the other threads' calls, which only a run that
# happens to call it from two threads at once under ThreadSanitizer would
# show. Exempt: what touches no state of the library (handle conversions,
# the clock, address arithmetic). The helpers ONIC_MPI_LOCKED_VIA names
# must take the lock themselves, with ONIC_MPI_LOCKED_MT.
# usage: mpi_locked.sh SRC_DIR
set -eu
exempt=" MPI_Aint_add MPI_Aint_diff MPI_Wtime MPI_Wtick MPI_Message_c2f MPI_Message_f2c MPI_Session_c2f MPI_Session_f2c "
bad=0
n=0
for f in "$1"/src/mpi/*.c; do
    out=$(awk -v exempt="$exempt" '
        # A definition: a line, not indented, that names MPI_X( after a type
        # and attributes or at its start (the type on the line before), and
        # is no declaration (one ending in ";" on a later line ends it too);
        # its body opens at the first line that is "{", or on its own line.
        # The helpers ONIC_MPI_LOCKED_VIA names (static mpi_x_locked) are
        # definitions whose body must begin with ONIC_MPI_LOCKED_MT.
        function start(line) {
            match(line, /(MPI_|mpi_)[A-Za-z0-9_]+\(/)
            name = substr(line, RSTART, RLENGTH - 1)
            helper = name ~ /^mpi_/
            want = helper || index(exempt, " " name " ") == 0
            pending = 1
            if (line ~ /\)[ \t]*\{[ \t]*$/) { inbody = 1; pending = 0 }
        }
        /^([A-Za-z_].*[ *])?MPI_[A-Za-z0-9_]+\(/ && !/;[ \t]*$/ && !/^[ \t]/ { start($0); next }
        /^static .*[ *]mpi_[a-z_]+_locked\(/ && !/;[ \t]*$/ { start($0); next }
        pending && /;[ \t]*$/ { pending = 0; next }
        pending && /^\{/ { inbody = 1; pending = 0; next }
        inbody {
            inbody = 0
            if (!want) next
            if (helper) {
                locked[name] = $0 ~ /^    ONIC_MPI_LOCKED_MT;$/
                next
            }
            if ($0 ~ /^    ONIC_MPI_LOCKED_VIA\(mpi_[a-z_]+_locked\(/) {
                match($0, /mpi_[a-z_]+_locked/)
                via[substr($0, RSTART, RLENGTH)] = name " " FILENAME ":" FNR
                print "ok " name
            } else {
                print ($0 ~ /^    ONIC_MPI_LOCKED;$/ ? "ok " : "missing ") name " " FILENAME ":" FNR
            }
        }
        END {
            for (h in via)
                if (!(h in locked) || !locked[h])
                    print "missing " h " (the helper of " via[h] ")"
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
