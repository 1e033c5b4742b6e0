#!/bin/sh
# Installs the SDK into a scratch prefix, then builds and runs a C kernel
# against <prefix>/include and <prefix>/lib/libcmodel.so alone.
# Usage: run.sh <build-dir> <scratch-dir> [extra C flags]
set -eu
build=$1
scratch=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cc -std=c11 -g -Wall -Wextra -Werror "$@" -I"$scratch/prefix/include" "$here/standalone_kernel.c" \
  -L"$scratch/prefix/lib" -lcmodel -Wl,-rpath,"$scratch/prefix/lib" -o "$scratch/standalone_kernel"
"$scratch/standalone_kernel"
