#!/bin/sh
# Installs the Debian packages onic needs to build, test and benchmark, and
# only when something is missing. Called by the Makefile; safe to run again.
set -eu

pkgs="cmake gcc make pkg-config libhwloc-dev"

missing=""
for tool in cmake gcc make pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists hwloc || missing="$missing hwloc"
fi
[ -z "$missing" ] && exit 0

echo "install-deps: missing:$missing; installing $pkgs"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $pkgs
