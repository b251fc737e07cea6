#!/bin/sh
# Keeps the benchmark suite's MPI programs from rotting: compiles one with
# onicc (-Wall -Wextra -Werror) and runs it through onicrun with tiny
# parameters, checking that every run ends well and prints the expected
# number of well-formed CSV lines (bench/suite.h: test,p1,p2,p3,median,min,max;
# p2p.c, rma.c and mt.c: mode,size,median,min,max; idle_mem.c:
# idle_mem,np,mapped,resident,private,objects).
#
#   test_suite.sh ONICC ONICRUN SOURCE_DIR WORK_DIR PROGRAM
set -eu
onicc=$1 onicrun=$2 src=$3 work=$4 prog=$5
mkdir -p "$work"
exe="$work/$prog"
case $prog in
    p2p) file=mpi/p2p.c ;;
    rma) file=mpi/rma.c ;;
    tiny) file=mpi/tiny.c ;;
    preposted | unexpected) file=queue/$prog.c ;;
    rate) file=rate/rate.c ;;
    overlap) file=overlap/overlap.c ;;
    jacobi | cannon) file=apps/$prog.c ;;
    mt | isend_local | idle_mem) file=mpi/$prog.c ;;
    *) echo "unknown program $prog" >&2; exit 2 ;;
esac
flags=
[ "$prog" = mt ] && flags=-pthread
# shellcheck disable=SC2086 # $flags: nothing or one word
"$onicc" -O2 -Wall -Wextra -Werror $flags -o "$exe" "$src/bench/$file" -lm

fails=0
# run NPROCS LINES ARGS...: LINES well-formed CSV lines expected on stdout.
run() {
    np=$1 want=$2
    shift 2
    out=$("$onicrun" -n "$np" --timeout 120 "$exe" "$@") || {
        echo "FAIL: onicrun -n $np $prog $*: exit $?" >&2
        fails=$((fails + 1))
        return 0
    }
    num='-?[0-9.]+([eE][-+]?[0-9]+)?'
    if [ "$prog" = p2p ] || [ "$prog" = rma ] || [ "$prog" = mt ]; then
        re="^[a-z_]+(,$num){4}\$"
    elif [ "$prog" = idle_mem ]; then
        re="^idle_mem,$np(,$num){4}\$"
    else
        re="^[a-z_]+(,$num){6}\$"
    fi
    good=$(printf '%s\n' "$out" | grep -Ec "$re" || true)
    all=$(printf '%s\n' "$out" | grep -c . || true)
    if [ "$good" -ne "$want" ] || [ "$all" -ne "$want" ]; then
        echo "FAIL: onicrun -n $np $prog $*: $good well-formed of $all lines, want $want:" >&2
        printf '%s\n' "$out" >&2
        fails=$((fails + 1))
        return 0
    fi
    echo "ok: -n $np $prog $* ($want lines)"
}

case $prog in
    p2p)
        run 2 10 latency 1
        run 2 6 bw 1
        run 2 6 rate 1
        run 4 6 rate 1
        run 1 5 self 1 ;;
    rma)
        run 2 7 put_lat 1
        run 2 7 get_lat 1
        run 2 4 put_rate 1 ;;
    tiny)
        run 2 1 allgather --iters 20 --reps 2
        run 2 1 chain --iters 20 --reps 2
        run 4 1 allgather --iters 20 --reps 1
        run 4 1 chain --iters 20 --reps 1 ;;
    preposted)
        run 2 10 lat --lens 0,5,40 --fracs 0,1 --sizes 8,4096 --rounds 2
        run 2 2 tput --lens 40 --fracs 0.5 --sizes 0,4096 --rounds 2 ;;
    unexpected)
        run 2 4 --lens 0,40 --sizes 8,4096 --rounds 2
        run 2 2 --lens 100 --sizes 8,4096 --rounds 2 --fill 1024 ;;
    rate)
        run 2 2 --sizes 8,4096 --iters 5 --reps 2
        run 4 1 --sizes 8 --iters 5 --reps 1 ;;
    overlap)
        run 2 2 overlap send --size 65536 --work 0,10 --iters 2 --reps 1
        run 2 2 overlap recv --size 65536 --work 0,10 --iters 2 --reps 1
        run 2 2 skew --size 65536 --work 0,10 --iters 3 --reps 1
        run 2 4 avail send --sizes 8,65536 --iters 2 --reps 1
        run 2 4 avail recv --sizes 8,65536 --iters 2 --reps 1
        run 2 2 bypass --size 8192 --batch 3 --work 0,10 --iters 2 --reps 2 ;;
    jacobi)
        # small grids: each run also checks every block against one process's sweep
        run 2 6 --n 8,32 --iters 3 --reps 2
        run 4 3 --n 16 --iters 4 --reps 1 --verify 1 ;;
    cannon)
        run 2 2 --n 8,24 --reps 1
        run 4 1 --n 16 --reps 2
        run 3 1 --n 12 --q 3 --reps 1 ;;
    mt)
        run 2 2 latency_mt 1 2 8,64 200
        run 2 1 rate_mt 1 1 8
        run 2 1 rate_mt 1 2 8 ;;
    idle_mem)
        run 2 1
        run 4 1 ;;
    isend_local)
        # the receiver computes 50 ms outside MPI; what is timed is not checked
        run 2 2 --counts 10,300 --reps 1 --sleep-ms 50 ;;
esac
[ "$fails" -eq 0 ] || { echo "$fails run(s) of $prog failed" >&2; exit 1; }
