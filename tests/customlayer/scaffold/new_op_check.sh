#!/bin/bash
# new_custom_op, the way a user meets it (ctest new_custom_op): in a copy of
# the sample-op project, against the SDK installed into a scratch prefix,
#   1. names that cannot be ops are refused, saying why, and change nothing:
#      not a C identifier, a C keyword, too long, an existing op;
#   2. a new op is written, and then refused as a duplicate (nothing changes);
#   3. the three libraries rebuild through envsetup.sh (and bm1688's firmware),
#      tpu_op_check passes the new op on both chips in fp32, fp16 and bf16,
#      and run_custom_unittest passes (the op's unit test and Python test
#      among the project's others).
# Usage: new_op_check.sh <SDK build dir> <scratch dir> <source dir>
set -u
build=$1
scratch=$2
root=$3
op=scalebias
rm -rf "$scratch"
mkdir -p "$scratch/project/customlayer"
prefix=$scratch/prefix
project=$scratch/project
cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "installing into $prefix failed"; exit 1; }

# The project as a user has it: the registry, the plugins and customlayer/,
# without what tests and builds left in the source tree.
cp "$root/register_ops.cmake" "$project/"
cp -r "$root/plugin" "$project/"
(cd "$root/customlayer" && tar --exclude=./test_if/unittest/tmp --exclude='./build-custom*' -cf - .) |
  (cd "$project/customlayer" && tar -xf -) || { echo "copying the project failed"; exit 1; }
# Python tests need the SDK's Python front end; a build without it runs the rest.
if ! ls "$prefix"/python/_tpu_sdk*.so >/dev/null 2>&1; then
  echo "note: the SDK was built without its Python front end: the Python tests are left out"
  rm -rf "$project/customlayer/test_if"
fi

check_log=$scratch/out.log
. "$root/scripts/check_steps.sh"

# Every file of the project with its checksum, to see that nothing changed.
snapshot() { (cd "$project" && find . -path ./build-custom -prune -o -type f -print | sort | xargs cksum); }

# `refused NAME TEXT`: new_custom_op NAME fails, says TEXT, changes nothing.
refused() {
  local before out
  before=$(snapshot)
  if out=$(new_custom_op "$1" 2>&1); then
    echo "new_custom_op $1 was accepted: $out"
    return 1
  fi
  case $out in *"$2"*"nothing was changed"*) ;; *) echo "expected \"$2\" in: $out"; return 1 ;; esac
  [ "$(snapshot)" = "$before" ] || { echo "new_custom_op $1 changed the project"; return 1; }
}

export TPUC_ROOT=$prefix CUSTOM_LAYER_PATH=$project CUSTOM_LAYER_JOBS=${CUSTOM_LAYER_JOBS:-2}
unset TPUKERNEL_CUSTOM_FIRMWARE_PATH CUSTOM_LAYER_BUILD_ROOT
# shellcheck source=/dev/null
source "$root/envsetup.sh" >/dev/null 2>&1 || { echo "sourcing envsetup.sh failed"; exit 1; }

check "a name that is no C identifier is refused" refused 1op "'1op' is not a C identifier"
check "a C keyword is refused" refused while "'while' is a C keyword"
check "a name longer than a model record is refused" refused a_name_of_26_characters__ "at most 20"
check "an existing op is refused" refused absadd "the op 'absadd' exists already: register_ops.cmake:"

# The checks of a new op; each returns 1 with a word on what went wrong
# (writes_op in a subshell: it works in the project directory).
writes_op() (
  local f
  new_custom_op "$1" || return 1
  cd "$project" || return 1
  for f in "plugin/plugin_$1.c" "customlayer/src/tpu_impl_$1.c" "customlayer/src/interface_$1.c" \
    "customlayer/unittest/$1_test.cc"; do
    [ -f "$f" ] || { echo "missing: $f"; return 1; }
  done
  if [ -d customlayer/test_if ] && [ ! -f "customlayer/test_if/unittest/test_$1.py" ]; then
    echo "missing: customlayer/test_if/unittest/test_$1.py"
    return 1
  fi
  [ "$(grep -cx "register_custom_op($1)" register_ops.cmake)" = 1 ] || { echo "not registered once"; return 1; }
  grep -q "} $1_param_t;" customlayer/include/backend_custom_param.h || { echo "no $1_param_t"; return 1; }
  python3 -c 'import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
assert [c["op"] for c in cases].count(sys.argv[2]) == 1, "not one case for the op"' customlayer/op_cases.json "$1"
)

rebuilds() { rebuild_custom_lib_cmodel bm1684x && rebuild_custom_firmware_cmodel bm1688; }

op_check_passes() {
  local out
  out=$(tpu_op_check --op "$1" --chip bm1684x --chip bm1688 --cases "$project/customlayer/op_cases.json")
  local status=$?
  printf '%s\n' "$out"
  [ "$status" = 0 ] || return 1
  [ "$(printf '%s\n' "$out" | grep -c "^$1 .* pass\$")" = 6 ] || { echo "expected 6 passing rows"; return 1; }
}

unittests_pass() {
  local out
  out=$(run_custom_unittest bm1684x 2>&1) || { printf '%s\n' "$out"; return 1; }
  printf '%s\n' "$out" | grep -q "Test *#[0-9]*: $1_test \.* *Passed" || { printf '%s\n' "$out"; return 1; }
}

check "new_custom_op $op writes the op" writes_op "$op"
check "new_custom_op $op a second time is refused" refused "$op" "the op '$op' exists already"
check "the three libraries and bm1688's firmware rebuild" rebuilds
check "tpu_op_check passes $op on both chips" op_check_passes "$op"
check "run_custom_unittest passes, the new op's tests included" unittests_pass "$op"

if [ "$failures" = 0 ]; then
  echo "new_custom_op: every check passed"
  rm -rf "$scratch"
else
  echo "new_custom_op: $failures check(s) FAILED (kept: $scratch)"
fi
[ "$failures" = 0 ]
