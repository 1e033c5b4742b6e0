#!/bin/sh
# Configures and builds the SDK into build/ (or $1), then installs it into
# install/ (the default TPUC_ROOT). Extra arguments go to cmake.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
cmake -S "$root" -B "$build" "$@" >/dev/null
cmake --build "$build" -j2
cmake --install "$build" --prefix "$root/install" >/dev/null
