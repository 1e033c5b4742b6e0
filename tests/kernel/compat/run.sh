#!/bin/sh
# The compatibility kit (shared spec tpu-kernel-api-current.md §5): installs
# the SDK into a scratch prefix and builds vendor-style code against
# <prefix>/include and <prefix>/lib/libcmodel.so alone, with the flags
# vendor builds use (GCC 14's default hard errors spelt out, every warning
# an error), as C and as C++; then runs the kernels on both chips.
# Usage: run.sh <build-dir> <scratch-dir> [extra compiler flags, e.g. sanitizers]
set -eu
build=$1
scratch=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null

strict="-DUSING_CMODEL -Wall -Werror -Werror=implicit-function-declaration -Werror=implicit-int
 -Werror=int-conversion -Werror=incompatible-pointer-types"
# shellcheck disable=SC2086
cc_c() { cc -std=gnu11 $strict "$@"; }
# shellcheck disable=SC2086
cc_cxx() { c++ -std=gnu++17 -DUSING_CMODEL -Wall -Werror -x c++ "$@"; }
inc="-I$prefix/include"
vendor="-I$here/vendor_common"
link="-L$prefix/lib -lcmodel -Wl,-rpath,$prefix/lib"

step() { echo "compat: $*"; }

# §5 item 5 and 21: every vendor prototype assigned to a pointer of its
# exact type, so a signature drift does not compile; linked, so a missing
# export does not link.
step "prototypes of the current vendor header"
python3 "$root/kernel/api/generate.py" prototypes "$here/vendor_prototypes.txt" "$scratch/prototypes.c"
printf 'int main(void) { return vendor_prototype_count < 300; }\n' >> "$scratch/prototypes.c"
# shellcheck disable=SC2086
cc_c "$@" $inc "$scratch/prototypes.c" $link -o "$scratch/prototypes_c"
# shellcheck disable=SC2086
cc_cxx "$@" $inc "$scratch/prototypes.c" $link -o "$scratch/prototypes_cxx"
"$scratch/prototypes_c"
"$scratch/prototypes_cxx"

# Items 6, 7, 9, 15: types, enum values, macros, return types (C and C++).
step "types and macros"
# shellcheck disable=SC2086
cc_c "$@" $inc "$here/types_and_macros.c" $link -o "$scratch/types_c"
# shellcheck disable=SC2086
cc_cxx "$@" $inc "$here/types_and_macros.c" $link -o "$scratch/types_cxx"
"$scratch/types_c"
"$scratch/types_cxx"

# Items 10, 11, 12: the include chain.
step "include chain"
for variant in COMPAT_OWN_NAMES COMPAT_COMMON_FIRST COMPAT_COMMON_AFTER; do
  # shellcheck disable=SC2086
  cc_c -D$variant $vendor $inc -c "$here/include_isolation.c" -o "$scratch/isolation.o"
  # shellcheck disable=SC2086
  cc_cxx -D$variant $vendor $inc -c "$here/include_isolation.c" -o "$scratch/isolation.o"
done
for file in only_tpu_kernel.c common_companion.c; do
  # shellcheck disable=SC2086
  cc_c $inc -c "$here/$file" -o "$scratch/check.o"
  # shellcheck disable=SC2086
  cc_cxx $inc -c "$here/$file" -o "$scratch/check.o"
done

# MIN / MAX spelt as the vendor's common.h spells them (a kernel repeating
# that definition compiles under -Werror) and the noreturn assertion
# handlers (a non-void function may end in TPUKERNEL_ASSERT(0)).
step "vendor MIN / MAX and noreturn assertions"
# shellcheck disable=SC2086
cc_c $inc -c "$here/vendor_macros.c" -o "$scratch/vendor_macros.o"
# shellcheck disable=SC2086
cc_cxx $inc -c "$here/vendor_macros.c" -o "$scratch/vendor_macros.o"

# A user's copy of an SDK header (a vendor copy: another include guard)
# earlier on the include path replaces the SDK's header everywhere: the
# SDK's headers include one another as <name.h>, and every declaration lives
# in the header where the vendor puts it, so nothing is declared twice.
step "user copies of SDK headers earlier on the include path"
for header in api_common.h api_utils.h backend_helper.h bitcasts.h common.h common_def.h fp16.h macros.h \
  print_trace.h tpu_defs.h tpu_kernel.h tpu_utils.h; do
  copies=$scratch/copies/$header
  mkdir -p "$copies"
  guard=$(sed -n 's/^#ifndef \([A-Z0-9_]*_H_*\)$/\1/p' "$prefix/include/$header" | head -n 1)
  [ -n "$guard" ] || { echo "compat: no include guard found in $header"; exit 1; }
  sed "s/\b$guard\b/USER_COPY_$guard/g" "$prefix/include/$header" >"$copies/$header"
  # shellcheck disable=SC2086
  cc_c -I"$copies" $inc -c "$here/all_sdk_headers.c" -o "$scratch/copies.o"
  # shellcheck disable=SC2086
  cc_cxx -I"$copies" $inc -c "$here/all_sdk_headers.c" -o "$scratch/copies.o"
done

# Items 1-4, 8, 16-20: vendor-style kernels in a library of two files,
# loaded with dlopen by the host, run by name on both chips. The kernels
# also compile as C++.
step "kernels"
for file in kernels_a.c kernels_b.c; do
  # shellcheck disable=SC2086
  cc_c "$@" -fPIC $vendor $inc -I"$here" -c "$here/$file" -o "$scratch/${file%.c}.o"
  # shellcheck disable=SC2086
  cc_cxx $vendor $inc -I"$here" -fsyntax-only "$here/$file"
done
# shellcheck disable=SC2086
cc "$@" -shared "$scratch/kernels_a.o" "$scratch/kernels_b.o" $link -o "$scratch/libcompat_kernels.so"
# shellcheck disable=SC2086
cc_c "$@" $inc -I"$here" "$here/host.c" $link -ldl -lm -o "$scratch/host"
"$scratch/host" "$scratch/libcompat_kernels.so" > "$scratch/host.out"
cat "$scratch/host.out"
# The debug print of a (1, 2, 1, 3) fp32 tensor shows every value.
for value in 1.5 2.5 3.5 4.5 5.5 6.5; do
  grep -q -- "$value" "$scratch/host.out" || { echo "compat: tpu_print_local_mem_data did not print $value"; exit 1; }
done
echo "compat: all passed"
