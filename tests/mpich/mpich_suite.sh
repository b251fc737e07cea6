#!/bin/bash
# MPICH 4.0.2's own test suite (test/mpi of Debian bookworm's mpich source
# package) built with an MPI's compiler and run with its launcher:
#
#   mpich_suite.sh [options] DIR...     DIR: pt2pt coll datatype comm group topo init errhan rma
#     --impl NAME        onic (default) or mpich: names the work tree and the report
#     --cc CC            the compiler wrapper (onic: build/onicc; mpich: mpicc.mpich)
#     --run LAUNCHER     the launcher, given -n N (onic: build/onicrun; mpich: mpirun.mpich)
#     --work DIR         where the suite is configured, built and logged (a build tree)
#     --only LIST        run only these tests (comma-separated names)
#     --known FILE       failures known with onic, one "dir/name np reason" a line: such a
#                        test failing is reported but does not fail the run
#     --timeout S        per test, unless its testlist says timeLimit (default 180)
#     --build-only       configure and build the tests, run none (a build that may
#                        share the machine, before the runs, which should not)
#
# The source is fetched once into ${ONIC_MPICH_CACHE:-~/.cache/onic}/mpich:
# `apt-get source` where a deb-src entry allows it, else the .dsc and the
# upstream tarball from the Debian mirror, checked against the .dsc's SHA-256.
# Nothing of MPICH enters onic's source tree. Without the source (no network)
# the script exits 77, which ctest reports as skipped, with the reason.
#
# Each testlist line "name np [key=value...]" is a test run with np
# processes. Left out, and listed as such: xfail= (MPICH's own expected
# failures), strict=false (MPICH extensions beyond the standard, and MPI-1
# calls MPI 3.0 removed), mem= (more memory than this machine's tests may
# take), and env= lines setting MPICH's
# internal MPIR_CVAR knobs (the same test again, tuned for MPICH's
# internals). A test passes when it exits 0 and prints "No Errors" (one
# marked resultTest=TestStatus or TestErrFatal when it exits non-zero).
# Exit status: 0 when every test that built passed or is a known failure,
# 1 otherwise (each failure named), 77 when the source cannot be had.
set -u

impl=onic cc="" run="" work="" only="" known="" timeout=180 build_only=
while [ $# -gt 0 ]; do
    case $1 in
    --impl) impl=$2; shift 2 ;;
    --cc) cc=$2; shift 2 ;;
    --run) run=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --known) known=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -*) echo "mpich_suite: unknown option $1" >&2; exit 2 ;;
    *) break ;;
    esac
done
dirs="$*"
# The builds and runs happen in other directories: a relative path is the
# caller's (a bare command name is looked up in PATH).
if [ -n "$known" ]; then
    [ -f "$known" ] || { echo "mpich_suite: --known $known: no such file" >&2; exit 2; }
    case $known in /*) ;; *) known=$PWD/$known ;; esac
fi
case $cc in */*) [ "${cc#/}" = "$cc" ] && cc=$PWD/$cc ;; esac
case $run in */*) [ "${run#/}" = "$run" ] && run=$PWD/$run ;; esac
if [ -z "$cc" ] || [ -z "$run" ] || [ -z "$work" ] || [ -z "$dirs" ]; then
    echo "mpich_suite: give --cc, --run, --work and the directories (see the top of $0)" >&2
    exit 2
fi

VERSION=4.0.2 DEBREV=4.0.2-3
MIRROR=${ONIC_MPICH_MIRROR:-http://deb.debian.org/debian}
cache=${ONIC_MPICH_CACHE:-$HOME/.cache/onic}/mpich
src=$cache/mpich-$VERSION/test/mpi

# --- The source, once ----------------------------------------------------------------------
fetch() {
    local tmp dsc sum
    mkdir -p "$cache" || return 1
    tmp=$(mktemp -d "$cache/fetch.XXXXXX") || return 1
    # apt-get source needs a deb-src entry; this script does not add one.
    if (cd "$tmp" && apt-get source --download-only -q "mpich=$DEBREV") >"$tmp/apt.log" 2>&1; then
        :
    else
        dsc=mpich_$DEBREV.dsc
        if ! curl -sSfL --retry 2 -o "$tmp/$dsc" "$MIRROR/pool/main/m/mpich/$dsc" 2>"$tmp/curl.log"; then
            echo "mpich_suite: SKIP: cannot fetch $MIRROR/pool/main/m/mpich/$dsc ($(head -c 200 "$tmp/curl.log")) and apt-get source found no deb-src entry" >&2
            rm -rf "$tmp"
            return 1
        fi
        sum=$(awk '/^Checksums-Sha256:/ {s=1; next} /^[A-Z]/ {s=0} s && $3 ~ /orig\.tar\.xz$/ {print $1}' "$tmp/$dsc")
        if ! curl -sSfL --retry 2 -o "$tmp/mpich_$VERSION.orig.tar.xz" \
                "$MIRROR/pool/main/m/mpich/mpich_$VERSION.orig.tar.xz" 2>"$tmp/curl.log"; then
            echo "mpich_suite: SKIP: cannot fetch mpich_$VERSION.orig.tar.xz from $MIRROR" >&2
            rm -rf "$tmp"
            return 1
        fi
        if [ -z "$sum" ] || ! echo "$sum  $tmp/mpich_$VERSION.orig.tar.xz" | sha256sum -c --quiet - >/dev/null 2>&1; then
            echo "mpich_suite: mpich_$VERSION.orig.tar.xz does not match the SHA-256 of $dsc; not used" >&2
            rm -rf "$tmp"
            return 1
        fi
    fi
    if ! tar -xJf "$tmp/mpich_$VERSION.orig.tar.xz" -C "$tmp" "mpich-$VERSION/test/mpi"; then
        echo "mpich_suite: cannot unpack mpich_$VERSION.orig.tar.xz" >&2
        rm -rf "$tmp"
        return 1
    fi
    rm -rf "$cache/mpich-$VERSION"
    mv "$tmp/mpich-$VERSION" "$cache/" && rm -rf "$tmp"
}

# Several suites may start at once (ctest -j): one fetches, the others wait.
mkdir -p "$cache" || exit 1
exec 9>"${cache%/mpich}/mpich.lock"
flock 9
if [ ! -x "$src/configure" ]; then
    fetch || exit 77
fi
flock -u 9

# --- Configure and build ------------------------------------------------------------------
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
exec 8>"$work/.lock"
flock 8
stamp="$work/.configured"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$cc" ]; then
    echo "mpich_suite: configuring MPICH's test suite with CC=$cc in $work"
    # No Fortran, C++, spawn, MPI-IO, partitioned communication, fault
    # tolerance or performance tests: outside what is run here. The
    # threads/ directories build against this configuration too (their
    # Makefiles link the threaded harness, libmtest_thread).
    # MPICC, not CC alone: configure otherwise takes the first mpicc in PATH.
    # --no-create: config.status then makes only the files of the directories
    # run (below); all of its 200-odd files took half of configure's time.
    rm -f "$work/Makefile" "$work"/*/Makefile "$work"/*/*/Makefile
    if ! (cd "$work" && "$src/configure" CC="$cc" MPICC="$cc" --enable-fortran=no --disable-cxx \
            --enable-threads=single --disable-spawn --disable-romio --disable-part \
            --disable-perftest --disable-ft-tests --disable-checkerrors --disable-dtpools \
            --no-create >configure.log 2>&1 &&
          ./config.status --file=Makefile --file=util/Makefile \
            --header=include/mpitestconf.h depfiles libtool >>configure.log 2>&1); then
        echo "mpich_suite: MPICH's configure failed with CC=$cc; see $work/configure.log:" >&2
        tail -20 "$work/configure.log" >&2
        exit 1
    fi
    if ! grep -qx "CC = $cc" "$work/Makefile"; then
        echo "mpich_suite: MPICH's configure did not take CC=$cc ($(grep '^CC =' "$work/Makefile"))" >&2
        exit 1
    fi
    echo "$cc" >"$stamp"
fi
# Each directory's Makefile and testlist, made when it is first run.
for dir in $dirs; do
    [ -f "$work/$dir/Makefile" ] && continue
    files="--file=$dir/Makefile"
    [ -f "$src/$dir/testlist.in" ] && files="$files --file=$dir/testlist"
    if [ ! -f "$src/$dir/Makefile.in" ] ||
       ! (cd "$work" && ./config.status $files depfiles >>configure.log 2>&1); then
        echo "mpich_suite: no $dir directory in MPICH's test suite, or config.status failed" \
             "making it; see $work/configure.log" >&2
        exit 2
    fi
done
if ! make -C "$work/util" -s libmtest_single.la >"$work/util.log" 2>&1; then
    echo "mpich_suite: MPICH's mtest harness does not build with $cc; see $work/util.log:" >&2
    grep -E "error|undefined" "$work/util.log" | head -20 >&2
    exit 1
fi
flock -u 8

# --- The tests ------------------------------------------------------------------------------
# One testlist line: name, np and the arguments; "" for lines not run, with
# the reason in $why.
parse() {
    local line=$1 w
    name="" np="" args="" why="" tlimit=$timeout must_fail=""
    set -- $line
    [ $# -ge 2 ] || return
    name=$1 np=$2
    shift 2
    case $np in *[!0-9]*) name=""; return ;; esac
    for w in "$@"; do
        case $w in
        arg=*) args="$args ${w#arg=}" ;;
        timeLimit=*) tlimit=${w#timeLimit=} ;;
        # The program must end with an error (an exit status, an error
        # handler that aborts, or a launcher's time limit).
        resultTest=TestStatus|resultTest=TestErrFatal) must_fail=1 ;;
        xfail=*) why="xfail (MPICH's expected failure)" ;;
        # Either case: MPICH's runtests compares it lowercased, and its
        # testlists spell it both ways (FALSE on MPI-1 calls that MPI 3.0
        # removed: datatype's *_oldapi, MPI_LB and MPI_UB).
        strict=[Ff][Aa][Ll][Ss][Ee]) why="strict=false (not standard MPI: an MPICH extension or a removed MPI-1 call)" ;;
        mem=*) why="needs ${w#mem=} GB of memory" ;;
        env=MPIR_CVAR_*) why="an MPICH internal setting (${w#env=})" ;;
        env=*) args="$args" ;;  # see below: passed by env
        esac
    done
}

cd "$work" || exit 1
total_fail=0
summary=""
for dir in $dirs; do
    list=$work/$dir/testlist
    [ -f "$list" ] || list=$src/$dir/testlist
    if [ ! -f "$list" ]; then
        echo "mpich_suite: no testlist in $dir" >&2
        exit 2
    fi
    mkdir -p "$work/logs/$dir"
    built=0 passed=0 failed=0 nobuild=0 skipped=0 knownf=0
    declare -A seen=()
    while IFS= read -r line; do
        line=${line%%#*}
        parse "$line"
        [ -n "$name" ] || continue
        if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then
            continue
        fi
        key="$name $np$args"
        [ -z "${seen[$key]:-}" ] || continue
        if [ -n "$why" ]; then
            # A variant of a test already run is not a test of its own.
            seen[$key]=1
            skipped=$((skipped + 1))
            echo "SKIP    $dir/$name $np$args: $why"
            continue
        fi
        seen[$key]=1
        # stdin from /dev/null: make and the launchers must not eat the testlist.
        if [ ! -x "$work/$dir/$name" ] && ! make -C "$work/$dir" -s "$name" </dev/null \
                >"$work/logs/$dir/$name.build.log" 2>&1; then
            nobuild=$((nobuild + 1))
            miss=$(grep -o "undefined reference to \`[A-Za-z_0-9]*'" \
                       "$work/logs/$dir/$name.build.log" | sed "s/.*\`//; s/'//" | sort -u | tr '\n' ' ')
            [ -n "$miss" ] || miss=$(grep -m1 "error:" "$work/logs/$dir/$name.build.log" | sed 's/^[^ ]* //')
            echo "NOBUILD $dir/$name: ${miss:-see logs/$dir/$name.build.log}"
            continue
        fi
        built=$((built + 1))
        if [ -n "$build_only" ]; then
            echo "BUILT   $dir/$name"
            continue
        fi
        envs=$(echo "$line" | tr ' ' '\n' | sed -n 's/^env=//p' | grep -v '^MPIR_CVAR_' || true)
        log=$work/logs/$dir/$name.$np.log
        (cd "$work/$dir" && env $envs timeout -k 5 "$tlimit" $run -n "$np" "./$name" $args) \
            </dev/null >"$log" 2>&1
        rc=$?
        if { [ -z "$must_fail" ] && [ $rc -eq 0 ] && grep -q '^ *No [Ee]rrors *$' "$log"; } ||
           { [ -n "$must_fail" ] && [ $rc -ne 0 ]; }; then
            passed=$((passed + 1))
            echo "PASS    $dir/$name $np$args"
            continue
        fi
        reason=$(grep -v '^ *$' "$log" | tail -1 | cut -c1-160)
        [ $rc -eq 124 ] && reason="timed out after ${tlimit}s"
        if [ -n "$known" ] && [ -f "$known" ] && grep -q "^$dir/$name $np " "$known"; then
            knownf=$((knownf + 1))
            failed=$((failed + 1))
            echo "KNOWN   $dir/$name $np$args (exit $rc): $(grep "^$dir/$name $np " "$known" | head -1 | cut -d' ' -f3-)"
            continue
        fi
        failed=$((failed + 1))
        total_fail=$((total_fail + 1))
        echo "FAIL    $dir/$name $np$args (exit $rc): $reason  [log: $log]"
    done <"$list"
    unset seen
    summary="$summary$(printf '%-9s %-6s built %3d  passed %3d  failed %3d (known %d)  not built %3d  left out %3d' \
        "$dir" "$impl" "$built" "$passed" "$failed" "$knownf" "$nobuild" "$skipped")\n"
done
printf "$summary"
if [ $total_fail -gt 0 ]; then
    echo "mpich_suite: $total_fail test(s) failed with $impl (FAIL lines above)"
    exit 1
fi
exit 0
