#!/bin/sh
# Installs the Debian packages onic needs, and only when something is
# missing. Called by the Makefile; safe to run again.
#
#   install-deps.sh          what building and testing need (make, make test):
#                            PMIx's and libfabric's headers (needed to build;
#                            a job loads the libraries only when it uses
#                            them), Open MPI's mpirun and MPICH's
#                            Hydra as launchers, MPICH's header and compiler
#                            (libmpich-dev) and curl and xz for MPICH's test
#                            suite (tests/mpich), fi_pingpong and iproute2 for
#                            the two-host tests, Slurm (srun, slurmctld,
#                            slurmd) for the two-host test under srun,
#                            Verilator, Yosys (with yosys-smtbmc) and z3
#                            for the RTL ALPU in hw/ (ctest label rtl)
#   install-deps.sh bench    also what the benchmark suite compares onic with
#                            and draws its report with (make bench, make demo):
#                            MPICH's and Open MPI's compilers, matplotlib for
#                            /usr/bin/python3, valgrind (callgrind and its
#                            header, for bench/mpi/instr.py)
#   install-deps.sh synth    also nextpnr-ice40, which places and times the
#                            iCE40 row of the RTL synthesis table (make -C hw
#                            synth calls this; its Virtex-II Pro rows need
#                            only Yosys)
#
# A benchmark package that cannot be installed is not an error: the suite
# leaves that MPI out (or the plots, or the instruction counts) and its
# report says so.
set -eu

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
updated=""
mode=${1:-}

apt_install() {
    # A fresh Debian has no sudo: say so instead of "sudo: not found".
    if [ -n "$SUDO" ] && ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps: installing Debian packages needs root, and sudo is not installed;" \
             "run $0 ${mode:+$mode }as root" >&2
        return 1
    fi
    if [ -z "$updated" ]; then
        $SUDO apt-get update -q
        updated=1
    fi
    $SUDO apt-get install -y -q --no-install-recommends "$@"
}

pkgs="cmake gcc g++ make pkg-config libhwloc-dev libpmix-dev libfabric-dev libfabric-bin
      openmpi-bin libopenmpi-dev mpich libmpich-dev iproute2 slurm-wlm verilator yosys z3
      curl xz-utils"
missing=""
# Slurm's daemons are in /usr/sbin, not always in a user's PATH.
PATH=$PATH:/usr/sbin:/sbin
for tool in cmake gcc g++ make pkg-config mpirun.openmpi mpiexec.hydra fi_pingpong ip \
            srun slurmctld slurmd verilator yosys yosys-smtbmc z3 curl xz; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if command -v pkg-config >/dev/null 2>&1; then
    for pc in hwloc pmix libfabric; do
        pkg-config --exists $pc || missing="$missing $pc"
    done
fi
# MPICH's header, not its commands: the mpich package ships mpicc.mpich and
# Hydra without it (it is in libmpich-dev), and MPICH's test suite and the
# benchmarks' comparison build against it (tests/mpich, make mpich).
# Either place will do (`ls` of both fails when one is absent, which is
# always: that ran apt-get on every call).
mpich_h=""
for h in /usr/include/*/mpich/mpi.h /usr/include/mpich/mpi.h; do
    [ -f "$h" ] && mpich_h=$h
done
[ -n "$mpich_h" ] || missing="$missing mpich/mpi.h"
if [ -n "$missing" ]; then
    echo "install-deps: missing:$missing; installing $pkgs"
    apt_install $pkgs
fi

if [ "$mode" = "synth" ]; then
    command -v nextpnr-ice40 >/dev/null 2>&1 && exit 0
    echo "install-deps: for the iCE40 synthesis, installing: nextpnr-ice40"
    apt_install nextpnr-ice40 ||
        echo "install-deps: could not install nextpnr-ice40; the synthesis table leaves out the iCE40 row"
    exit 0
fi
[ "$mode" = "bench" ] || exit 0

# The suite runs under Debian's python3 (/usr/bin/python3), which is where
# python3-matplotlib installs, whatever python3 comes first in PATH.
bench=""
# MPICH's compiler wrapper can be there without its header (libmpich-dev).
command -v mpicc.mpich >/dev/null 2>&1 && command -v mpirun.mpich >/dev/null 2>&1 &&
    echo '#include <mpi.h>' | mpicc.mpich -E -x c - >/dev/null 2>&1 ||
    bench="$bench mpich libmpich-dev"
# Likewise Open MPI's: its header is in libopenmpi-dev.
command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1 &&
    echo '#include <mpi.h>' | mpicc.openmpi -E -x c - >/dev/null 2>&1 ||
    bench="$bench openmpi-bin libopenmpi-dev"
/usr/bin/python3 -c "import matplotlib" >/dev/null 2>&1 || bench="$bench python3-matplotlib"
command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/callgrind.h ] ||
    bench="$bench valgrind"
[ -z "$bench" ] && exit 0

echo "install-deps: for the benchmark suite, installing:$bench"
# One at a time, so what can be installed is, and the rest is reported.
for p in $bench; do
    apt_install "$p" || echo "install-deps: could not install $p; the benchmark report will say what is missing"
done
exit 0
