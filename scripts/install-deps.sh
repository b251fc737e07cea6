#!/bin/sh
# Installs the Debian packages onic needs to build, test and benchmark, and
# only when something is missing. Called by the Makefile; safe to run again.
# PMIx and libfabric are optional for onic itself (without them it builds
# and runs on one node); the tests use them, Open MPI's mpirun and MPICH's
# Hydra as launchers, fi_pingpong and iproute2 for the two-host tests.
set -eu

pkgs="cmake gcc make pkg-config libhwloc-dev libpmix-dev libfabric-dev libfabric-bin
      openmpi-bin libopenmpi-dev mpich iproute2"

missing=""
for tool in cmake gcc make pkg-config mpirun.openmpi mpiexec.hydra fi_pingpong ip; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if command -v pkg-config >/dev/null 2>&1; then
    for pc in hwloc pmix libfabric; do
        pkg-config --exists $pc || missing="$missing $pc"
    done
fi
[ -z "$missing" ] && exit 0

echo "install-deps: missing:$missing; installing $pkgs"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $pkgs
