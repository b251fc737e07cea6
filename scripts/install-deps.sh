#!/bin/sh
# Installs the Debian packages onic needs to build, test and benchmark, and
# only those that are missing. Called by the Makefile; safe to run again.
set -eu

need="cmake gcc make pkg-config"
pkgs="cmake gcc make pkg-config"

missing=""
for tool in $need; do
    command -v "$tool" >/dev/null 2>&1 || missing="yes"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing $pkgs"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends $pkgs
