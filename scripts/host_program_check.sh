#!/bin/sh
# Builds examples/host_program (a kernel module and a device-style host
# program using bmlib_runtime.h) against an installed SDK, outside this
# tree, and runs it on both chips; also checks that a chip name the SDK
# does not emulate is refused with a clear message.
#
# Usage: host_program_check.sh [SDK prefix]     (default: $TPUC_ROOT)
#
# The example is copied into a temporary directory first, so only the
# installed prefix (CMAKE_PREFIX_PATH) is visible to it. Set KEEP=1 to keep
# the temporary directory (it is kept on failure anyway).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${TPUC_ROOT:-}}
if [ -z "$prefix" ]; then
  echo "host_program_check: no SDK prefix: pass it as the argument or set TPUC_ROOT" >&2
  exit 2
fi
prefix=$(cd "$prefix" 2>/dev/null && pwd) || { echo "host_program_check: $1: no such directory" >&2; exit 2; }
if [ ! -f "$prefix/lib/cmake/TpuSdk/TpuKernelModule.cmake" ]; then
  echo "host_program_check: no installed SDK with bmlib in $prefix (no lib/cmake/TpuSdk/TpuKernelModule.cmake);" >&2
  echo "  install one with: cmake --install <SDK build dir> --prefix $prefix" >&2
  exit 2
fi
jobs=${CUSTOM_LAYER_JOBS:-$(nproc 2>/dev/null || echo 2)}

work=$(mktemp -d "${TMPDIR:-/tmp}/host_program.XXXXXX")
ok=0
cleanup() {
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; else echo "host_program_check: files kept in $work"; fi
}
trap cleanup EXIT

cp -R "$root/examples/host_program" "$work/project"
echo "== configure $work/project against $prefix"
env -u TPUC_ROOT cmake -S "$work/project" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "host_program_check: configure failed" >&2; exit 1; }
echo "== build"
cmake --build "$work/build" --parallel "$jobs"
echo "== install into $work/install"
cmake --install "$work/build" --prefix "$work/install" >/dev/null

failures=0
# run <label> <expected exit> <expected output pattern> <command>...
run() {
  label=$1 expected_exit=$2 pattern=$3
  shift 3
  status=0
  output=$("$@" 2>&1) || status=$?
  if [ "$status" -eq "$expected_exit" ] && printf '%s\n' "$output" | grep -q "$pattern"; then
    echo "ok:   $label"
  else
    echo "FAIL: $label (exit $status, expected $expected_exit and output matching \"$pattern\"):"
    printf '%s\n' "$output"
    failures=$((failures + 1))
  fi
}

for dir in "$work/build" "$work/install/bin"; do
  run "$dir/saxpy on bm1684x" 0 "100000 elements, 0 wrong" env TPU_SDK_CHIP=bm1684x "$dir/saxpy"
  run "$dir/saxpy on bm1688" 0 "chip id 0x1686a200" env TPU_SDK_CHIP=bm1688 "$dir/saxpy"
  run "$dir/saxpy with a tail tile on bm1688" 0 "70001 elements, 0 wrong" \
    env TPU_SDK_CHIP=bm1688 "$dir/saxpy" "$dir/libsaxpy_kernels.so" 70001
done
run "an unknown chip is refused" 1 'TPU_SDK_CHIP="bm9999" is not a chip this SDK emulates' \
  env TPU_SDK_CHIP=bm9999 "$work/build/saxpy"
run "a missing module is refused" 1 "cannot read module file" "$work/build/saxpy" "$work/nothing.so"

if [ "$failures" -ne 0 ]; then
  echo "host_program_check: $failures check(s) failed"
  exit 1
fi
ok=1
echo "host_program_check: the example device program builds against $prefix and runs on both chips"
