#!/bin/sh
# Builds examples/out_of_tree_op against an installed SDK, outside this tree,
# checks the three libraries it makes, and runs the op on both chips
# (tpu_op_check, when the SDK installed it); then builds a PPL kernel file
# the same way (examples/out_of_tree_ppl) and runs its programs on both chips.
#
# Usage: out_of_tree_check.sh [SDK prefix]     (default: $TPUC_ROOT)
#
# The example is copied into a temporary directory first, so it cannot reach
# back into the SDK's sources: only the installed prefix (CMAKE_PREFIX_PATH)
# is visible to it. Nothing is written into the SDK tree or the prefix.
# Set KEEP=1 to keep the temporary directory (it is kept on failure anyway).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:-${TPUC_ROOT:-}}
if [ -z "$prefix" ]; then
  echo "out_of_tree_check: no SDK prefix: pass it as the argument or set TPUC_ROOT" >&2
  exit 2
fi
prefix=$(cd "$prefix" 2>/dev/null && pwd) || { echo "out_of_tree_check: $1: no such directory" >&2; exit 2; }
if [ ! -f "$prefix/lib/cmake/TpuSdk/TpuSdkConfig.cmake" ]; then
  echo "out_of_tree_check: no installed SDK in $prefix (no lib/cmake/TpuSdk/TpuSdkConfig.cmake);" >&2
  echo "  install one with: cmake --install <SDK build dir> --prefix $prefix" >&2
  exit 2
fi
jobs=${CUSTOM_LAYER_JOBS:-$(nproc 2>/dev/null || echo 2)}

work=$(mktemp -d "${TMPDIR:-/tmp}/out_of_tree_op.XXXXXX")
ok=0
cleanup() {
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; else echo "out_of_tree_check: files kept in $work"; fi
}
trap cleanup EXIT

cp -R "$root/examples/out_of_tree_op" "$work/project"
echo "== configure $work/project against $prefix"
# TPUC_ROOT is dropped from the environment so only the prefix given counts.
env -u TPUC_ROOT cmake -S "$work/project" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "out_of_tree_check: configure failed" >&2; exit 1; }
echo "== build"
cmake --build "$work/build" --parallel "$jobs"
echo "== install into $work/install"
cmake --install "$work/build" --prefix "$work/install" >/dev/null

failures=0
# expect <library> <symbol>...: each symbol is defined and exported.
expect() {
  lib=$1
  shift
  if [ ! -f "$lib" ]; then
    echo "FAIL: $lib was not built"
    failures=$((failures + 1))
    return
  fi
  exported=$(nm -D --defined-only "$lib" | awk '{print $3}')
  for symbol in "$@"; do
    if printf '%s\n' "$exported" | grep -qx "$symbol"; then
      echo "ok:   $(basename "$lib") exports $symbol"
    else
      echo "FAIL: $(basename "$lib") does not export $symbol"
      failures=$((failures + 1))
    fi
  done
}
# Nothing undefined may be left for the loader but the SDK and libc.
expect_resolved() {
  lib=$1
  missing=$(env LD_LIBRARY_PATH= ldd -r "$lib" 2>&1 | grep -E 'undefined symbol|not found' || true)
  if [ -n "$missing" ]; then
    echo "FAIL: $(basename "$lib") does not load on its own:"
    echo "$missing"
    failures=$((failures + 1))
  else
    echo "ok:   $(basename "$lib") loads with all symbols resolved"
  fi
}

for dir in "$work/build/lib" "$work/install/lib"; do
  echo "== libraries in $dir"
  expect "$dir/libplugin_custom.so" inference_scaleshift
  expect "$dir/libbackend_custom.so" backend_api_scaleshift_global api_scaleshift_global \
    tpu_custom_api_level tpu_custom_registered_ops
  for arch in bm1684x bm1688; do
    expect "$dir/libcmodel_custom_$arch.so" tpu_global_calculate_entry tpu_local_calculate_entry \
      tpu_shape_infer_entry tpu_slice_infer_entry api_scaleshift_global \
      tpu_custom_api_level tpu_custom_firmware_chip tpu_custom_registered_ops
    expect_resolved "$dir/libcmodel_custom_$arch.so"
  done
  expect_resolved "$dir/libbackend_custom.so"
  expect_resolved "$dir/libplugin_custom.so"
done

# ---- RUN THE OP -----------------------------------------------------------
# The installed libraries against their own reference, on both chips, with
# the SDK's op checker (TpuSdk::runtime's op tester): the cases in the
# example's op_cases.json (fp32/fp16/bf16, small, odd and larger than local
# memory), each through the backend and the firmware. Replace or extend this
# block when the op tester gains a more direct entry point.
checker=$prefix/bin/tpu_op_check
if [ -x "$checker" ]; then
  echo "== run scaleshift with $checker"
  if ! env LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TPUC_ROOT="$prefix" \
    "$checker" --lib-dir "$work/install/lib" --cases "$work/project/op_cases.json"; then
    echo "FAIL: scaleshift does not match its reference (see above)"
    failures=$((failures + 1))
  fi
else
  echo "note: $checker is not installed; the op was built and checked, not run"
fi
# --------------------------------------------------------------------------

# ---- A PPL KERNEL FILE ----------------------------------------------------
# examples/out_of_tree_ppl with the sample op's scale_add_fp.pl: the
# installed PPL headers, TpuPpl.cmake and ppl_interface.py build it into a
# library a C program calls (its generated header's chip helpers, the retry
# loop) and into its __TEST__ program; both run on both chips.
echo "== PPL: build examples/out_of_tree_ppl against $prefix"
cp -R "$root/examples/out_of_tree_ppl" "$work/ppl"
cp "$root/customlayer/PplBackend/src/scale_add_fp.pl" "$work/ppl/"
if env -u TPUC_ROOT cmake -S "$work/ppl" -B "$work/ppl-build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/ppl.log" 2>&1 &&
  cmake --build "$work/ppl-build" --parallel "$jobs" >>"$work/ppl.log" 2>&1; then
  for chip in bm1684x bm1688; do
    for program in run_scale_add scale_add_test; do
      if (cd "$work/ppl-build" && "./$program" "$chip"); then
        echo "ok:   $program $chip"
      else
        echo "FAIL: $program $chip"
        failures=$((failures + 1))
      fi
    done
  done
else
  cat "$work/ppl.log"
  echo "FAIL: the PPL example does not build against $prefix"
  failures=$((failures + 1))
fi
# --------------------------------------------------------------------------

if [ "$failures" -ne 0 ]; then
  echo "out_of_tree_check: $failures check(s) failed"
  exit 1
fi
ok=1
echo "out_of_tree_check: the example op builds against $prefix, exports what it should and passes its checks"
