#!/bin/bash
# Mistakes in register_ops.cmake are reported at their line of the registry
# ("<registry>:<line>: error: ..."), before anything else, not in a CMake
# file of the SDK or a generated source (ctest registry_errors):
#   1. a misspelt macro (register_custom_opp), with the macro it resembles;
#   2. an op name that is no C identifier;
#   3. a local registration without register_custom_op;
#   4. an optional function no source defines: a warning at its line;
#   5. an op whose api_<op>_global no source defines: an error at its line
#      instead of the linker's undefined reference in a generated file, and
#      no library is left behind;
#   6. register_custom_grad mistakes (an unregistered gradient op, an unknown
#      option, a bad NON_DIFFERENTIABLE index, a second gradient of an op);
#   7. PPL ops (register_custom_ppl_op): one with no .pl kernels in the
#      project is an error at its line; a .pl that does not compile fails
#      the build naming the .pl file and line (never a skipped op).
# Each case builds the backend of a copy of the sample-op project against
# the SDK installed into a scratch prefix, as rebuild_custom_backend does.
# Usage: registry_errors_check.sh <SDK build dir> <scratch dir> <source dir>
set -u
build=$1
scratch=$2
root=$3
rm -rf "$scratch"
mkdir -p "$scratch/project/customlayer"
prefix=$scratch/prefix
project=$scratch/project
tree=$scratch/backend
cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "installing into $prefix failed"; exit 1; }
cp -r "$root/plugin" "$project/"
cp -r "$root/customlayer/src" "$root/customlayer/include" "$root/customlayer/PplBackend" "$project/customlayer/"
registry=$project/register_ops.cmake

check_log=$scratch/out.log
. "$root/scripts/check_steps.sh"

# The sample registry with LINE appended; prints the line's number.
registry_with() {
  cp "$root/register_ops.cmake" "$registry"
  printf '%s\n' "$1" >>"$registry"
  wc -l <"$registry"
}

# Configures and builds the backend; the output goes to $scratch/build.log.
build_backend() {
  { cmake -S "$root" -B "$tree" -DCUSTOM_LAYER_DEV_MODE=backend -DTPUC_ROOT="$prefix" \
      -DCUSTOM_LAYER_PROJECT_DIR="$project" && cmake --build "$tree"; } >"$scratch/build.log" 2>&1
}

# `fails_at LINE TEXT`: the backend build with LINE in the registry fails,
# and its first error is "<registry>:<line>: error: TEXT".
fails_at() {
  local number first
  number=$(registry_with "$1")
  if build_backend; then
    cat "$scratch/build.log"
    echo "the build succeeded"
    return 1
  fi
  first=$(grep -m1 -E '(^|: )error|Error' "$scratch/build.log")
  case $first in
    "$registry:$number: error: $2"*) ;;
    *) cat "$scratch/build.log"; echo "expected first: $registry:$number: error: $2"; echo "got: $first"; return 1 ;;
  esac
}

check "a misspelt registration is reported at its line, with the macro it resembles" \
  fails_at "register_custom_opp(ceiladd)" "unknown command register_custom_opp(ceiladd) (did you mean register_custom_op?)"
check "an op name that is no C identifier is reported at its line" \
  fails_at "register_custom_op(bad-name)" "register_custom_op(bad-name): op name 'bad-name' is not a C identifier"
check "a local registration without register_custom_op is reported at its line" \
  fails_at "register_custom_local_op(nosuch)" "register_custom_local_op(nosuch) but no register_custom_op(nosuch)"

optional_missing_warns() {
  local number
  number=$(registry_with "register_custom_local_op(crop)")
  build_backend || { cat "$scratch/build.log"; return 1; }
  grep -qF "$registry:$number: warning: register_custom_local_op(crop) is registered, but no source defines api_crop_local" \
    "$scratch/build.log" || { cat "$scratch/build.log"; return 1; }
}
check "an optional function no source defines is a warning at its registry line" optional_missing_warns

check "an op whose api_<op>_global no source defines is an error at its registry line" \
  fails_at "register_custom_op(absaddd)" "register_custom_op(absaddd) is registered, but no source defines api_absaddd_global"
no_undefined_reference() {
  if grep -n "undefined reference" "$scratch/build.log"; then return 1; fi
  if [ -e "$tree/lib/libbackend_custom.so" ]; then echo "the library was left behind"; return 1; fi
}
check "... and not an undefined reference in a generated file, nor a library left behind" no_undefined_reference

# register_custom_grad (docs/gradients.md): its words, and both ops registered.
check "a gradient op that is not registered is reported at its line" \
  fails_at "register_custom_grad(absadd nosuch_grad)" "register_custom_grad(absadd nosuch_grad) but no register_custom_op(nosuch_grad)"
check "an unknown register_custom_grad option is reported at its line" \
  fails_at "register_custom_grad(absadd ceiladd SEPERATE)" "register_custom_grad(absadd ceiladd SEPERATE): unknown option 'SEPERATE'"
check "NON_DIFFERENTIABLE takes input indices" \
  fails_at "register_custom_grad(absadd ceiladd NON_DIFFERENTIABLE x)" "register_custom_grad(absadd ceiladd NON_DIFFERENTIABLE x): NON_DIFFERENTIABLE takes input indices (0, 1, ...), not 'x'"
check "a second gradient of an op is reported at its line" \
  fails_at "register_custom_grad(leakyrelu ceiladd)" "register_custom_grad(leakyrelu ceiladd): op 'leakyrelu' already has a gradient"
check "an op cannot be its own gradient" \
  fails_at "register_custom_grad(absadd absadd)" "register_custom_grad(absadd absadd): op 'absadd' cannot be its own gradient op"

# PPL ops.
ppl_without_kernels() {
  local number first status=0
  mv "$project/customlayer/PplBackend" "$scratch/PplBackend.away"
  registry_with "" >/dev/null
  number=$(grep -n "register_custom_ppl_op(scaleadd)" "$registry" | cut -d: -f1)
  if build_backend; then echo "the build succeeded"; status=1; fi
  first=$(grep -m1 -E '(^|: )error|Error' "$scratch/build.log")
  case $first in
    "$registry:$number: error: PPL op 'scaleadd' is registered, but the project has no PPL kernels (PplBackend/src/*.pl)") ;;
    *) cat "$scratch/build.log"; echo "got: $first"; status=1 ;;
  esac
  mv "$scratch/PplBackend.away" "$project/customlayer/PplBackend"
  return $status
}
check "a PPL op without .pl kernels is an error at its registry line" ppl_without_kernels
broken_pl_names_its_line() {
  local pl=$project/customlayer/PplBackend/src/scale_add_fp.pl status=0
  cp "$pl" "$scratch/scale_add_fp.pl"
  printf '%s\n' "__KERNEL__ void broken(fp32 *out, int n) { no_such_operation(out, n); }" >>"$pl"
  registry_with "" >/dev/null
  if build_backend; then echo "a .pl that does not compile built"; status=1; fi
  grep -q "scale_add_fp.pl:$(wc -l <"$pl"):[0-9]*: error: .*no_such_operation" "$scratch/build.log" ||
    { cat "$scratch/build.log"; echo "no error at the .pl line"; status=1; }
  cp "$scratch/scale_add_fp.pl" "$pl"
  return $status
}
check "a .pl that does not compile fails the build at its .pl line" broken_pl_names_its_line

if [ "$failures" = 0 ]; then
  echo "registry errors: every check passed"
  rm -rf "$scratch"
else
  echo "registry errors: $failures check(s) FAILED (kept: $scratch)"
fi
[ "$failures" = 0 ]
