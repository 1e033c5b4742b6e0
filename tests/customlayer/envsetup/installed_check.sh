#!/bin/bash
# envsetup.sh as the vendor's documentation has users source it, from an
# installation, and the interpreter check (ctest envsetup_installed):
#   1. <prefix>/customlayer/envsetup.sh exists after `cmake --install`;
#      sourced (from another directory, under set -euo pipefail) it defines
#      the functions, sets TPU_SDK_PATH to the SDK's sources and TPUC_ROOT
#      to that installation; a TPUC_ROOT set before is kept;
#   2. a python3 first on PATH that is not the interpreter the SDK's Python
#      module was built for is named, with the one to use; the right one
#      (or a symlink to it) says nothing.
# Usage: installed_check.sh <SDK build dir> <scratch dir> <source dir>
set -u
build=$1
scratch=$2
root=$3
rm -rf "$scratch"
mkdir -p "$scratch/elsewhere"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null || { echo "installing into $prefix failed"; exit 1; }
check_log=$scratch/out.log
. "$root/scripts/check_steps.sh"

check "installed as <prefix>/customlayer/envsetup.sh" test -f "$prefix/customlayer/envsetup.sh"

check "sourced from the installation: the SDK's functions, TPUC_ROOT is that installation" bash -c '
  set -euo pipefail
  cd "$3"
  unset TPUC_ROOT TPUKERNEL_CUSTOM_FIRMWARE_PATH CUSTOM_LAYER_PATH
  source "$1/customlayer/envsetup.sh" >/dev/null 2>&1
  [ "$TPUC_ROOT" = "$1" ] || { echo "TPUC_ROOT=$TPUC_ROOT"; exit 1; }
  [ "$TPU_SDK_PATH" = "$2" ] || { echo "TPU_SDK_PATH=$TPU_SDK_PATH"; exit 1; }
  [ "$TPUKERNEL_CUSTOM_FIRMWARE_PATH" = "$1/lib" ]
  case ":$PATH:" in *":$1/bin:"*) ;; *) echo "PATH=$PATH"; exit 1 ;; esac
  type rebuild_custom_lib_cmodel >/dev/null
  type run_custom_unittest >/dev/null
  [ -z "${_custom_layer_default_root:-}" ]
' check "$prefix" "$root" "$scratch/elsewhere"

check "a TPUC_ROOT set before sourcing the installed file is kept" bash -c '
  set -eu
  TPUC_ROOT=/opt/somewhere; export TPUC_ROOT
  source "$1/customlayer/envsetup.sh" >/dev/null 2>&1
  [ "$TPUC_ROOT" = /opt/somewhere ]
' check "$prefix"

# A python3 that is another interpreter: a script first on PATH.
built=$(sed -n 's/^set(TPU_SDK_PYTHON_EXECUTABLE "\(.*\)")$/\1/p' "$prefix/lib/cmake/TpuSdk/TpuSdkPython.cmake")
mkdir -p "$scratch/other-python" "$scratch/same-python"
printf '#!/bin/sh\necho /opt/other/bin/python3.99\n' >"$scratch/other-python/python3"
chmod +x "$scratch/other-python/python3"
ln -s "$built" "$scratch/same-python/python3"

check "another python3 first on PATH is named, with the interpreter to use" bash -c '
  set -eu
  PATH=$2:$PATH
  msg=$(source "$1/customlayer/envsetup.sh" 2>&1 >/dev/null)
  printf "%s\n" "$msg"
  case $msg in *"python3 on PATH is $2/python3 (/opt/other/bin/python3.99), not the interpreter the SDK'"'"'s Python module was built for"*) ;; *) exit 1 ;; esac
  case $msg in *"Use $3 "*) ;; *) exit 1 ;; esac
' check "$prefix" "$scratch/other-python" "$built"

check "the interpreter the module was built for (through a symlink) says nothing" bash -c '
  set -eu
  PATH=$2:$PATH
  msg=$(source "$1/customlayer/envsetup.sh" 2>&1 >/dev/null)
  [ -z "$msg" ] || { printf "%s\n" "$msg"; exit 1; }
' check "$prefix" "$scratch/same-python"

if [ "$failures" = 0 ]; then echo "installed envsetup.sh: every check passed"; rm -rf "$scratch"; fi
[ "$failures" = 0 ]
