#!/bin/bash
# A vendor-layout customlayer directory through envsetup.sh, as a vendor
# user meets it (tests/customlayer/vendor_layout/customlayer, written for this check):
#
#   1. sourced from inside the project, envsetup.sh picks it as
#      CUSTOM_LAYER_PATH and builds it where it lies, with the SDK's headers
#      in place of the project's copies, quietly (the vendor's warning set),
#      naming the registration whose function no source defines, and
#      installing the firmware under the vendor's names too;
#   2. run_custom_unittest (the op cases and the vendor-style Python test)
#      and tpu_op_check pass on both chips;
#   3. a copied, already built project rebuilds (its trees start afresh);
#   4. a failed rebuild removes the library it was to replace, and an old
#      library beside newer ones is refused, naming both builds;
#   5. a rank-1 input that makes the kernel divide by zero is a kernel error
#      naming the signal, function and file, and the checker goes on;
#   6. AP (host CPU) ops: the project given the SDK's sample top-k in the
#      vendor's layout (ap_src/, include/custom_ap/, the AP headers):
#      rebuild_custom_plugin puts createLayerInstance into the plugin,
#      rebuild_custom_apop_x86 installs libcustomapop.so(.1.0.0), the copy
#      libcustomcpuop.so, bmcpu.h and customap_common.h, and the library runs
#      top-k through the installed runtime (run_ap_topk.cc); the installed
#      AP headers never replace the project's own; rebuild_custom_cpuop_aarch64
#      builds an AArch64 library, or without the cross compiler names the package;
#   7. PPL ops: the project given the SDK's sample PPL op scaleadd in the
#      vendor's layout (PplBackend/src/*.pl, *_slice.cpp, *_api.c,
#      PplBackend/include/helper.h, plugin/plugin_scaleadd.c,
#      register_custom_ppl_op(scaleadd)): the build compiles its kernels
#      (no "skipped" PPL op), run_custom_unittest runs its TpuLang test
#      (test_scaleadd_mixed.py) on both chips, and a .pl that does not
#      compile fails rebuild_custom_lib_cmodel naming the .pl file;
#   and (2b) the plugin's assert() fires (user code is built without
#   -DNDEBUG), and a Python test file that exits 0 whatever its tests do
#   still fails run_custom_unittest, which then does not say "or none exist".
#
# Usage: vendor_layout_check.sh [SDK build dir]   (default: build/)
# Works in a temporary directory with its own SDK prefix; nothing in the
# SDK tree changes. KEEP=1 keeps the directory (kept on failure anyway).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d "${TMPDIR:-/tmp}/vendor_layout.XXXXXX")
ok=0
cleanup() {
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; else echo "vendor_layout_check: files kept in $work"; fi
}
trap cleanup EXIT

fail() {
  echo "vendor_layout_check: FAILED: $*" >&2
  exit 1
}
# expect_in FILE TEXT...: every TEXT occurs in FILE.
expect_in() {
  file=$1
  shift
  for text in "$@"; do
    grep -qF -- "$text" "$file" || { cat "$file"; fail "\"$text\" missing from $file"; }
  done
}
# run_logged LOG COMMAND...: runs the command in a shell with the project's
# environment, output into LOG; returns its status.
run_logged() {
  log=$1
  shift
  (cd "$project/src" && unset CUSTOM_LAYER_PATH TPUKERNEL_CUSTOM_FIRMWARE_PATH &&
    export TPUC_ROOT="$work/prefix" && . "$root/envsetup.sh" >/dev/null && "$@") >"$log" 2>&1
}

sdk_state() { (cd "$root" && git status --porcelain --ignored -- . ':!build*' ':!install' 2>/dev/null || :); }
sdk_before=$(sdk_state)
echo "== installing the SDK into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
project=$work/customlayer
cp -R "$root/tests/customlayer/vendor_layout/customlayer" "$project"
lib=$work/prefix/lib

# The SDK's sample AP op, in the vendor's layout (step 6).
cp -R "$root/customlayer/ap_src" "$project/ap_src"
mkdir -p "$project/include/custom_ap"
cp "$root/customlayer/include/custom_ap/"*.h "$project/include/custom_ap/"
for header in cpu_layer.h cpu_layer_factory.h customap_common.h bmcpu.h bmcpu_macro.h; do
  cp "$root/customlayer/include/$header" "$project/include/"
done

# The SDK's sample PPL op, in the vendor's layout (step 7). Its parameter
# struct and parser are in the project's headers already. (Only scaleadd's
# sources: the SDK's other PPL sample, hardsigmoid, uses the SDK's own
# customlayer helpers, which this vendor project does not have.)
mkdir -p "$project/PplBackend/src"
cp -R "$root/customlayer/PplBackend/include" "$project/PplBackend/include"
cp "$root/customlayer/PplBackend/src/scale_add_fp"* "$project/PplBackend/src/"
cp "$root/plugin/plugin_scaleadd.c" "$project/plugin/"
cp "$root/customlayer/test_if/unittest/test_scaleadd_mixed.py" "$project/test_if/unittest/"
cp "$root/customlayer/python/my_tpulang_layer.py" "$project/python/"
printf '%s\n' "register_custom_ppl_op(scaleadd)" >>"$project/register_ops.cmake"
python3 - "$project/op_cases.json" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))
cases["cases"].append({"op": "scaleadd", "shapes": [[2, 5, 7, 9], [2, 5, 7, 9]], "params": {"scale": 0.75},
                       "num_outputs": 2})
json.dump(cases, open(sys.argv[1], "w"), indent=1)
PY

echo "== 1. build the project where it lies"
run_logged "$work/env.log" sh -c 'echo "project=$CUSTOM_LAYER_PATH"' || fail "sourcing envsetup.sh"
expect_in "$work/env.log" "project=$project"
run_logged "$work/build.log" rebuild_custom_lib_cmodel bm1684x || { cat "$work/build.log"; fail "rebuild_custom_lib_cmodel"; }
expect_in "$work/build.log" \
  "register_custom_local_bfsz(scaleclip) is registered, but no source defines api_scaleclip_local_bfsz" \
  "replaced by the SDK's own: include/api_common.h, include/kernel/common.h, include/kernel/tpu_kernel.h"
if grep -E '\.(c|h|cpp|pl):[0-9]+:[0-9]+: warning:' "$work/build.log"; then
  fail "the project's sources built with compiler warnings (the vendor's warning set reports none)"
fi
for file in libplugin_custom.so libbackend_custom.so libcmodel_custom_bm1684x.so libcmodel_custom_1684x.so; do
  [ -e "$lib/$file" ] || fail "$lib/$file was not installed"
done
[ -e "$project/build-custom/plugin/CMakeCache.txt" ] || fail "the build trees are not in the project"
[ "$(sdk_state)" = "$sdk_before" ] || fail "the build wrote into the SDK tree"

echo "== 2. unit tests and op checks on both chips"
for chip in bm1684x bm1688; do
  run_logged "$work/unittest-$chip.log" run_custom_unittest $chip || {
    cat "$work/unittest-$chip.log"
    fail "run_custom_unittest $chip"
  }
  expect_in "$work/unittest-$chip.log" "100% tests passed"
  for test in test_addrow test_scaleclip test_scaleadd_mixed; do
    grep -Eq "$test\\.py \\.+ +Passed" "$work/unittest-$chip.log" ||
      fail "the project's Python test $test.py did not run and pass on $chip"
  done
done
[ -e "$lib/libcmodel_custom_1688.so" ] || fail "the bm1688 firmware has no vendor name"
run_logged "$work/check.log" tpu_op_check --cases "$project/op_cases.json" --chip bm1684x --chip bm1688 || {
  cat "$work/check.log"
  fail "tpu_op_check on both chips"
}

echo "== 2b. user code keeps assert(); Python tests are judged by their unittest results"
if run_logged "$work/assert.log" tpu_op_check --cases "$project/inverted_cases.json" --chip bm1684x --allow-unchecked; then
  cat "$work/assert.log"
  fail "lo > hi passed: the plugin's assert(p.lo <= p.hi) did not fire (built with -DNDEBUG?)"
fi
expect_in "$work/assert.log" "plugin hook inference_scaleclip: assert(p.lo <= p.hi) failed at " "plugin_scaleclip.c:12"
cp "$root/tests/customlayer/vendor_layout/always_exits_0.py" "$project/test_if/unittest/test_always_exits_0.py"
if run_logged "$work/exit0.log" run_custom_unittest bm1684x; then
  cat "$work/exit0.log"
  fail "a Python test file with a failing test passed because its process exits 0"
fi
rm "$project/test_if/unittest/test_always_exits_0.py"
expect_in "$work/exit0.log" "test_always_exits_0.py: 2 test(s), 1 failure(s), 0 error(s)" \
  "the failure run_custom_unittest must show" "run_custom_unittest: bm1684x tests failed"
if grep -q "none exist" "$work/exit0.log"; then fail "a failed run says the tests may not exist"; fi
grep -Eq "test_addrow\.py \.+ +Passed" "$work/exit0.log" || fail "the other Python tests did not run beside it"

echo "== 3. a copied project rebuilds by itself"
cp -R "$project" "$work/copied"
project=$work/copied
run_logged "$work/copied.log" rebuild_custom_lib_cmodel bm1684x || { cat "$work/copied.log"; fail "rebuild in the copy"; }
expect_in "$work/copied.log" "starting it afresh"

echo "== 4. no silent stale libraries"
cp "$lib/libbackend_custom.so" "$work/old_backend.so"
cp "$project/src/tpu_impl_addrow.c" "$work/tpu_impl_addrow.c"
echo "this does not compile" >>"$project/src/tpu_impl_addrow.c"
if run_logged "$work/broken.log" rebuild_custom_backend; then fail "a broken source built"; fi
expect_in "$work/broken.log" "removed $lib/libbackend_custom.so"
[ ! -e "$lib/libbackend_custom.so" ] || fail "the failed rebuild left the old backend installed"
cp "$work/tpu_impl_addrow.c" "$project/src/tpu_impl_addrow.c"
echo "/* edited */" >>"$project/src/tpu_impl_scaleclip.c"
run_logged "$work/rebuilt.log" rebuild_custom_lib_cmodel bm1684x || { cat "$work/rebuilt.log"; fail "rebuild"; }
cp "$work/old_backend.so" "$lib/libbackend_custom.so"
if run_logged "$work/mixed.log" tpu_op_check --cases "$project/op_cases.json" --chip bm1684x; then
  cat "$work/mixed.log"
  fail "an old backend ran beside a newer plugin and firmware"
fi
expect_in "$work/mixed.log" "different builds" "$lib/libbackend_custom.so" "rebuild_custom_lib_cmodel"
run_logged "$work/restored.log" rebuild_custom_lib_cmodel bm1684x || { cat "$work/restored.log"; fail "rebuild"; }

echo "== 5. a host fault in kernel code is a kernel error"
if run_logged "$work/rank1.log" tpu_op_check --cases "$project/rank1_cases.json" --chip bm1684x --allow-unchecked; then
  cat "$work/rank1.log"
  fail "a rank-1 input passed although the kernel divides by zero"
fi
expect_in "$work/rank1.log" "SIGFPE" "api_scaleclip_global" "interface_scaleclip.c"

echo "== 6. AP (host CPU) ops"
project=$work/customlayer
nm -D --defined-only "$lib/libplugin_custom.so" | grep -qw createLayerInstance ||
  fail "the plugin has no createLayerInstance: ap_src/*.cpp was not compiled into it"
# rebuild_custom_lib_cmodel (step 1) built the AP library too; the alias
# takes (and drops) a chip argument.
expect_in "$work/build.log" "customcpuop (x86) from 4 AP op source(s) in $project/ap_src/"
run_logged "$work/apop.log" rebuild_custom_apop_x86 bm1688 || { cat "$work/apop.log"; fail "rebuild_custom_apop_x86"; }
expect_in "$work/apop.log" "rebuild_custom_apop_x86: customcpuop" "libcustomcpuop.so"
for file in lib/libcustomapop.so lib/libcustomapop.so.1.0.0 lib/libcustomcpuop.so include/bmcpu.h include/customap_common.h; do
  [ -e "$work/prefix/$file" ] || fail "$work/prefix/$file was not installed"
done
readelf -d "$lib/libcustomapop.so.1.0.0" | grep -q 'SONAME.*libcustomapop\.so\.1\.0\.0' || fail "libcustomapop.so has no SOVERSION 1.0.0"
for symbol in bmcpu_init bmcpu_uninit customcpu_process tpu_sdk_ap_op_type tpu_sdk_ap_api_level; do
  nm -D --defined-only "$lib/libcustomcpuop.so" | grep -qw "$symbol" || fail "libcustomcpuop.so does not export $symbol"
done
c++ -std=c++17 -o "$work/run_ap_topk" "$root/tests/customlayer/vendor_layout/run_ap_topk.cc" -I"$work/prefix/include" \
  -L"$lib" -Wl,-rpath,"$lib" -ltpu_runtime -lcmodel || fail "run_ap_topk.cc does not build against the installed SDK"
"$work/run_ap_topk" "$lib/libcustomcpuop.so" "$lib/libplugin_custom.so" >"$work/ap_run.log" 2>&1 ||
  { cat "$work/ap_run.log"; fail "top-k through the installed runtime"; }
expect_in "$work/ap_run.log" "values 9 6 5 indices 5 7 4 shapes [1,3]"
# The installed customap_common.h and bmcpu.h never stand in for the project's.
rm -f "$project/build-custom/plugin/.envsetup-configured"
run_logged "$work/plugin_again.log" rebuild_custom_plugin || { cat "$work/plugin_again.log"; fail "rebuild_custom_plugin"; }
if grep -E "replaced by the SDK's own:.*(customap_common|bmcpu)" "$work/plugin_again.log"; then
  fail "the installed AP headers replaced the project's own"
fi
if command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  run_logged "$work/aarch64.log" rebuild_custom_cpuop_aarch64 || { cat "$work/aarch64.log"; fail "rebuild_custom_cpuop_aarch64"; }
  readelf -h "$lib/libcustomapop.so.1.0.0" | grep -q AArch64 || fail "rebuild_custom_cpuop_aarch64 did not build for AArch64"
  run_logged "$work/apop.log" rebuild_custom_apop_x86 || { cat "$work/apop.log"; fail "rebuild_custom_apop_x86"; }
else
  if run_logged "$work/aarch64.log" rebuild_custom_cpuop_aarch64; then fail "rebuild_custom_cpuop_aarch64 without a cross compiler"; fi
  expect_in "$work/aarch64.log" "apt-get install g++-aarch64-linux-gnu"
fi

echo "== 7. PPL ops"
project=$work/customlayer
expect_in "$work/build.log" "PPL op(s) scaleadd, kernels from 1 .pl file(s)"
if grep -qi "skipped" "$work/build.log"; then fail "the build still reports a skipped op"; fi
for file in libbackend_custom.so libcmodel_custom_bm1684x.so libcmodel_custom_bm1688.so; do
  nm -D --defined-only "$lib/$file" | grep -qw api_scaleadd_global || fail "$file has no api_scaleadd_global"
done
pl=$project/PplBackend/src/scale_add_fp.pl
cp "$pl" "$work/scale_add_fp.pl"
echo "__KERNEL__ void broken(fp32 *out) { tiu::no_such_operation(out); }" >>"$pl"
if run_logged "$work/broken_pl.log" rebuild_custom_lib_cmodel bm1684x; then
  cat "$work/broken_pl.log"
  fail "a .pl that does not compile built"
fi
grep -q "scale_add_fp.pl:$(wc -l <"$pl"):[0-9]*: error:.*no_such_operation" "$work/broken_pl.log" ||
  { cat "$work/broken_pl.log"; fail "the error does not name the .pl line"; }
cp "$work/scale_add_fp.pl" "$pl"
run_logged "$work/pl_fixed.log" rebuild_custom_lib_cmodel bm1684x || { cat "$work/pl_fixed.log"; fail "rebuild after the fix"; }

ok=1
echo "vendor_layout_check: all passed"
