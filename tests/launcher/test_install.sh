#!/bin/sh
# An installed onic, used the three ways a user links a program:
#   test_install.sh CMAKE BUILD_DIR SOURCE_DIR
# installs BUILD_DIR into a temporary prefix, then builds
# tests/launcher/maps_job.c with the installed onicc, with pkg-config's
# onic.pc (shared), and against libonic.a (pkg-config --static); each runs
# under the installed onicrun on one node without libfabric or libpmix
# loaded, and across ONIC_NODES=2 with libfabric loaded at run time (by the
# static libonic too). The installed libonic.so needs neither library.
cmake=$1 build=$2 src=$3
run=""   # set once installed, for check_lib.sh's go
. "$(dirname "$0")/check_lib.sh"
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
export FI_PROVIDER=tcp FI_TCP_IFACE=lo
unset ONIC_XPORT ONIC_NODES ONIC_OFI_LIB ONIC_PMIX_LIB
net="libfabric libinfinipath libpsm libpmix"

"$cmake" --install "$build" --prefix "$prefix" >"$out" 2>&1
check "cmake --install" [ $? -eq 0 ]
run=$prefix/bin/onicrun
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
check "the installed libonic.so needs neither libfabric nor libpmix" \
    sh -c "! readelf -d '$prefix/lib/libonic.so' | grep NEEDED | grep -q -e fabric -e pmix"

job=$src/tests/launcher/maps_job.c
"$prefix/bin/onicc" -O2 -o "$prefix/job_onicc" "$job" >"$out" 2>&1
check "onicc builds" [ $? -eq 0 ]
cc -O2 -o "$prefix/job_pc" "$job" $(pkg-config --cflags --libs onic) >"$out" 2>&1
check "pkg-config onic builds" [ $? -eq 0 ]
# --libs-only-other: the flags a sanitized build's library needs too.
# -fno-lto: libonic.a's objects are fat (CMakeLists.txt), and gcc would
# otherwise run LTO's code generation over the whole library for this one
# program (14 s of CPU, a serial test's time in CI); this link takes their
# ordinary code, as a compiler without LTO does.
cc -O2 -fno-lto -o "$prefix/job_static" "$job" $(pkg-config --cflags onic) \
    $(pkg-config --libs-only-other onic) -L"$prefix/lib" \
    -Wl,-Bstatic -lonic -Wl,-Bdynamic \
    $(pkg-config --static --libs-only-l onic | sed 's/-lonic//') >"$out" 2>&1
check "pkg-config --static onic builds against libonic.a" [ $? -eq 0 ]
check "the static program does not need libonic.so" \
    sh -c "! readelf -d '$prefix/job_static' | grep NEEDED | grep -q libonic"

# A stencil's first steps (a Cartesian grid, derived types for the halo,
# subarrays to gather), built from the installed header and library the
# way a user would: onicc, and cc with pkg-config's flags (shared, and
# --static, which needs only what onic.pc's Libs.private lists).
halo=$src/examples/halo.c
"$prefix/bin/onicc" -O2 -o "$prefix/halo_onicc" "$halo" >"$out" 2>&1
check "onicc builds examples/halo.c" [ $? -eq 0 ]
cc -O2 -o "$prefix/halo_pc" "$halo" $(pkg-config --cflags onic) \
    $(pkg-config --static --libs onic) >"$out" 2>&1
check "cc with pkg-config --static --libs builds examples/halo.c" [ $? -eq 0 ]
for kind in onicc pc; do
    for np in 3 4; do
        "$prefix/bin/onicrun" -n $np --timeout 60 "$prefix/halo_$kind" >"$out" 2>&1
        rc=$?
        check "halo_$kind at $np processes" sh -c "[ $rc -eq 0 ] && grep -q ': ok\$' '$out'"
    done
done

for kind in onicc pc static; do
    go -n 2 "$prefix/job_$kind" self absent $net
    check "$kind: one node, neither library loaded" [ $rc -eq 0 ]
    ONIC_NODES=2 go -n 2 "$prefix/job_$kind" self present libfabric
    check "$kind: two nodes, libfabric loaded" [ $rc -eq 0 ]
done
check_end install
