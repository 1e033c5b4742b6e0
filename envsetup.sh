# envsetup.sh: the custom-layer environment and build functions.
#
#   source /path/to/envsetup.sh          (bash or zsh, from any directory)
#
# Sets TPU_SDK_PATH (this directory), CUSTOM_LAYER_PATH (the op project the
# functions build: see below), TPUC_ROOT (the installed SDK; default
# <this directory>/install, a value set before sourcing is kept),
# PATH, LD_LIBRARY_PATH, PYTHONPATH and TPUKERNEL_CUSTOM_FIRMWARE_PATH (default
# $TPUC_ROOT/lib: a directory, the runtime picks libcmodel_custom_<chip>.so
# in it per process). Sourcing twice adds nothing twice.
#
# The op project is a vendor customlayer directory (register_ops.cmake,
# src/, include/, plugin/, ...) or this SDK's own tree (its sample ops):
# CUSTOM_LAYER_PATH when it was set to such a directory before sourcing,
# else the vendor directory the shell is in when sourcing (or one above it),
# else this SDK. A vendor directory builds as it is, from where it lies;
# nothing in this SDK's tree changes.
#
# Functions (vendor names; arch is bm1684x (default) or bm1688):
#   rebuild_custom_plugin [arch]            libplugin_custom.so
#   rebuild_custom_backend [arch]           libbackend_custom.so
#   rebuild_custom_firmware_cmodel [arch]   libcmodel_custom_<arch>.so
#   rebuild_custom_lib_cmodel [arch]        the three above (and the AP ops' library, when
#                                           the project has ap_src/*.cpp)
#   run_custom_unittest [arch]              builds them, then runs the project's tests
#   new_custom_op <name>                    writes a new op, ready to build and test
#   rebuild_custom_cpuop_x86 [arch]         AP (host CPU) ops of ap_src/: libcustomapop.so
#                                           and libcustomcpuop.so (alias rebuild_custom_apop_x86)
#   rebuild_custom_cpuop_aarch64 [arch]     the same for an aarch64 host (aarch64-linux-gnu-g++;
#                                           alias rebuild_custom_apop_aarch64)
#   rebuild_custom_firmware_soc/_pcie, rebuild_custom_lib_soc/_pcie: explain why not here
#
# Each build keeps its own tree under $CUSTOM_LAYER_BUILD_ROOT (default
# $CUSTOM_LAYER_PATH/build-custom): plugin, backend, cmodel-<arch>, unittest,
# apop-x86, apop-aarch64.
# Trees are reused (only what changed is rebuilt; a tree made at another
# path, in a moved or copied project, starts afresh by itself), compiled in
# parallel (CUSTOM_LAYER_JOBS, default: all cores) and installed into
# $TPUC_ROOT/lib. A failed build removes from $TPUC_ROOT/lib the library it
# was to replace, so no older library is used beside newer ones.
# Functions run in a subshell: the caller's directory, shell options and
# variables are left as they were. See docs/custom-layer-build.md.
#
# Everything here is written to be sourced under `set -eu -o pipefail` too:
# no top-level command may fail and no unset variable is read.

# ---- where this file lives ----------------------------------------------
_custom_layer_self=
if [ -n "${BASH_VERSION:-}" ]; then
  eval '_custom_layer_self=${BASH_SOURCE[0]}'
  if [ "$_custom_layer_self" = "$0" ]; then
    echo "envsetup.sh: run as a program, it changes nothing: source it (source $0)" >&2
  fi
elif [ -n "${ZSH_VERSION:-}" ]; then
  eval '_custom_layer_self=${(%):-%x}'
elif [ -f ./envsetup.sh ] && [ -f ./cmake/custom_layer_project.cmake ]; then
  # Other shells do not say which file they are sourcing: accept the
  # current directory when it is this repository.
  _custom_layer_self=./envsetup.sh
fi
if [ -n "$_custom_layer_self" ]; then
  # readlink -f: absolute, with every symlink (to the file or on the way) resolved.
  _custom_layer_self=$(command readlink -f -- "$_custom_layer_self" 2>/dev/null || :)
fi

_custom_layer_failed=
if [ -z "$_custom_layer_self" ] || [ ! -f "${_custom_layer_self%/*}/cmake/custom_layer_project.cmake" ]; then
  echo "envsetup.sh: cannot tell where this file is; source it with bash or zsh" \
    "(or with another shell from its own directory: . ./envsetup.sh)" >&2
  _custom_layer_failed=1
else

# ---- helpers (names start with _custom_layer_) ----------------------------

# _custom_layer_path_remove LIST ENTRY: LIST without any ENTRY component.
_custom_layer_path_remove() {
  _custom_layer_list=":$1:"
  while :; do
    case $_custom_layer_list in
      *":$2:"*) _custom_layer_list="${_custom_layer_list%%":$2:"*}:${_custom_layer_list#*":$2:"}" ;;
      *) break ;;
    esac
  done
  _custom_layer_list=${_custom_layer_list#:}
  printf '%s\n' "${_custom_layer_list%:}"
  unset _custom_layer_list
}

# _custom_layer_path_prepend LIST ENTRY: ENTRY first, once; no empty
# component (an empty one would mean the current directory).
_custom_layer_path_prepend() {
  _custom_layer_list=$(_custom_layer_path_remove "$1" "$2")
  printf '%s\n' "$2${_custom_layer_list:+:$_custom_layer_list}"
  unset _custom_layer_list
}

# Run at the start of every function's subshell: a predictable shell,
# whatever the caller had set. Only the subshell is affected.
_custom_layer_sane_shell() {
  if [ -n "${ZSH_VERSION:-}" ]; then
    emulate sh
  fi
  set +e +u +f +C
  if (set +o pipefail) 2>/dev/null; then set +o pipefail; fi
  IFS=' 	
'
  unset CDPATH
  if (trap - ERR) 2>/dev/null; then trap - ERR; fi
}

_custom_layer_error() {
  printf '%s\n' "$*" >&2
}

# _custom_layer_arch FUNCTION [arch]: prints the chip, bm1684x by default.
_custom_layer_arch() {
  _custom_layer_fn=$1
  shift
  if [ $# -gt 1 ]; then
    _custom_layer_error "$_custom_layer_fn: too many arguments (usage: $_custom_layer_fn [bm1684x|bm1688])"
    return 1
  fi
  case $(printf '%s' "${1:-bm1684x}" | command tr 'A-Z' 'a-z') in
    bm1684x) echo bm1684x ;;
    bm1688) echo bm1688 ;;
    *)
      _custom_layer_error "$_custom_layer_fn: unknown chip '$1': expected bm1684x (the default) or bm1688"
      return 1
      ;;
  esac
}

# _custom_layer_is_project DIR: DIR holds an op project, in the vendor's
# customlayer layout (register_ops.cmake, src/) or this SDK's own
# (register_ops.cmake, customlayer/src/).
_custom_layer_is_project() {
  [ -n "$1" ] && [ -f "$1/register_ops.cmake" ] && { [ -d "$1/src" ] || [ -d "$1/customlayer/src" ]; }
}

# _custom_layer_has_ap_ops: the op project has AP op sources (ap_src/*.cpp).
_custom_layer_has_ap_ops() {
  # The layouts as cmake/custom_layer_project.cmake tells them apart: this
  # SDK's (customlayer/src, so customlayer/ap_src: also a copy of the SDK's
  # sample project elsewhere), else the vendor's.
  if [ -d "$CUSTOM_LAYER_PATH/customlayer/src" ]; then
    set -- "$CUSTOM_LAYER_PATH/customlayer/ap_src"
  else
    set -- "$CUSTOM_LAYER_PATH/ap_src"
  fi
  for _custom_layer_file in "$1"/*.cpp; do
    [ -f "$_custom_layer_file" ] && return 0
    break
  done
  return 1
}

# _custom_layer_enclosing_project DIR: DIR or the nearest directory above it
# that holds a vendor-layout op project; nothing when there is none.
_custom_layer_enclosing_project() {
  _custom_layer_dir=$1
  while [ -n "$_custom_layer_dir" ]; do
    if [ -f "$_custom_layer_dir/register_ops.cmake" ] && [ -d "$_custom_layer_dir/src" ]; then
      printf '%s\n' "$_custom_layer_dir"
      break
    fi
    case $_custom_layer_dir in
      */*) _custom_layer_dir=${_custom_layer_dir%/*} ;;
      *) _custom_layer_dir= ;;
    esac
  done
  unset _custom_layer_dir
}

_custom_layer_jobs() {
  if [ -n "${CUSTOM_LAYER_JOBS:-}" ]; then
    echo "$CUSTOM_LAYER_JOBS"
  else
    command nproc 2>/dev/null || command getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2
  fi
}

_custom_layer_build_root() {
  case ${CUSTOM_LAYER_BUILD_ROOT:-} in
    '') echo "$CUSTOM_LAYER_PATH/build-custom" ;;
    /*) echo "$CUSTOM_LAYER_BUILD_ROOT" ;;
    *) echo "$PWD/$CUSTOM_LAYER_BUILD_ROOT" ;;
  esac
}

# Checks the environment the functions need; installs the SDK into the
# default prefix when it is missing there.
_custom_layer_check_env() {
  if [ -z "${TPU_SDK_PATH:-}" ] || [ ! -f "$TPU_SDK_PATH/cmake/custom_layer_project.cmake" ]; then
    _custom_layer_error "$1: TPU_SDK_PATH='${TPU_SDK_PATH:-}' is not this SDK's directory; source its envsetup.sh again"
    return 1
  fi
  if ! _custom_layer_is_project "${CUSTOM_LAYER_PATH:-}"; then
    _custom_layer_error "$1: CUSTOM_LAYER_PATH='${CUSTOM_LAYER_PATH:-}' is not an op project (no register_ops.cmake"
    _custom_layer_error "  with src/ or customlayer/src/); point it at your customlayer directory, or unset it, and source"
    _custom_layer_error "  $TPU_SDK_PATH/envsetup.sh again"
    return 1
  fi
  if [ -z "${TPUC_ROOT:-}" ]; then
    _custom_layer_error "$1: TPUC_ROOT is not set; source $TPU_SDK_PATH/envsetup.sh again"
    return 1
  fi
  if [ -f "$TPUC_ROOT/lib/cmake/TpuSdk/TpuSdkConfig.cmake" ]; then
    return 0
  fi
  if [ "$TPUC_ROOT" = "$TPU_SDK_PATH/install" ]; then
    echo "$1: the SDK is not installed in $TPUC_ROOT yet; building and installing it (scripts/build.sh)"
    # With the Python front end, which run_custom_unittest needs for test_*.py.
    if ! sh "$TPU_SDK_PATH/scripts/build.sh" "$TPU_SDK_PATH/build" -DTPU_SDK_BUILD_PYTHON=ON; then
      _custom_layer_error "$1: building the SDK failed (scripts/build.sh)"
      return 1
    fi
    if [ ! -f "$TPUC_ROOT/lib/cmake/TpuSdk/TpuSdkConfig.cmake" ]; then
      _custom_layer_error "$1: scripts/build.sh ran but $TPUC_ROOT/lib/cmake/TpuSdk is still missing"
      return 1
    fi
    return 0
  fi
  _custom_layer_error "$1: no SDK installed in TPUC_ROOT=$TPUC_ROOT (no lib/cmake/TpuSdk/TpuSdkConfig.cmake)."
  _custom_layer_error "  Install it there:  cmake -S $TPU_SDK_PATH -B <build dir> && cmake --build <build dir> -j && cmake --install <build dir> --prefix $TPUC_ROOT"
  _custom_layer_error "  or use the default prefix: unset TPUC_ROOT TPUKERNEL_CUSTOM_FIRMWARE_PATH; source $TPU_SDK_PATH/envsetup.sh"
  return 1
}

# _custom_layer_fresh_if_moved FUNCTION TREE: empties TREE when CMake made
# it at another path or for another SDK (the project or the SDK was moved
# or copied, build trees and all): CMake refuses such a tree ("CMakeCache.txt
# directory ... is different").
_custom_layer_fresh_if_moved() {
  _custom_layer_cache="$2/CMakeCache.txt"
  [ -f "$_custom_layer_cache" ] || return 0
  _custom_layer_made_in=$(command sed -n 's/^CMAKE_CACHEFILE_DIR:INTERNAL=//p' "$_custom_layer_cache")
  _custom_layer_made_for=$(command sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$_custom_layer_cache")
  if [ "$_custom_layer_made_in" -ef "$2" ] && [ "$_custom_layer_made_for" -ef "$TPU_SDK_PATH" ]; then
    return 0
  fi
  echo "$1: $2 was made in $_custom_layer_made_in for the SDK in $_custom_layer_made_for; starting it afresh"
  command rm -rf "$2"
}

# _custom_layer_configure FUNCTION TREE MODE ARCH: configures TREE unless it
# was configured with the same settings already (a configured tree re-runs
# CMake by itself when a CMake file or the registry changes).
_custom_layer_configure() {
  _custom_layer_fn=$1
  _custom_layer_tree=$2
  _custom_layer_mode=$3
  _custom_layer_chip=$4
  set -- -S "$TPU_SDK_PATH" -B "$_custom_layer_tree" -DCUSTOM_LAYER_DEV_MODE="$_custom_layer_mode" \
    -DTPUC_ROOT="$TPUC_ROOT" -DCUSTOM_LAYER_PROJECT_DIR="$CUSTOM_LAYER_PATH"
  # The plugin and the backend do not depend on the chip: switching it must
  # not reconfigure their trees.
  case $_custom_layer_mode in
    cmodel | unittest) set -- "$@" -DCUSTOM_LAYER_CHIP_ARCH="$_custom_layer_chip" ;;
    customcpuop)
      set -- "$@" -DCUSTOM_LAYER_AP_ARCH="${_custom_layer_ap_arch:-x86}"
      if [ "${_custom_layer_ap_arch:-x86}" = aarch64 ]; then
        set -- "$@" -DCMAKE_C_COMPILER="$(command -v aarch64-linux-gnu-gcc)" \
          -DCMAKE_CXX_COMPILER="$(command -v aarch64-linux-gnu-g++)"
      fi
      ;;
  esac
  _custom_layer_stamp="$*"
  if [ -f "$_custom_layer_tree/CMakeCache.txt" ] && [ -f "$_custom_layer_tree/.envsetup-configured" ] &&
    { [ -f "$_custom_layer_tree/build.ninja" ] || [ -f "$_custom_layer_tree/Makefile" ]; } &&
    [ "$(command cat "$_custom_layer_tree/.envsetup-configured")" = "$_custom_layer_stamp" ]; then
    return 0
  fi
  # A new tree uses Ninja when it is installed (faster no-op and incremental
  # builds than make) unless CMAKE_GENERATOR says otherwise; an existing tree
  # keeps the generator it was made with.
  if [ ! -f "$_custom_layer_tree/CMakeCache.txt" ] && [ -z "${CMAKE_GENERATOR:-}" ] &&
    command -v ninja >/dev/null 2>&1; then
    set -- "$@" -G Ninja
  fi
  _custom_layer_fresh_if_moved "$_custom_layer_fn" "$_custom_layer_tree" || return 1
  command mkdir -p "$_custom_layer_tree" || return 1
  command rm -f "$_custom_layer_tree/.envsetup-configured"
  if ! command cmake "$@" >"$_custom_layer_tree/configure.log" 2>&1; then
    command cat "$_custom_layer_tree/configure.log" >&2
    _custom_layer_error "$_custom_layer_fn: configuring $_custom_layer_tree failed (log: $_custom_layer_tree/configure.log)"
    return 1
  fi
  # Lines the project prints for the user (op lists, "nothing to build").
  command sed -n 's/^-- custom layer: /  /p' "$_custom_layer_tree/configure.log"
  printf '%s\n' "$_custom_layer_stamp" >"$_custom_layer_tree/.envsetup-configured"
}

# _custom_layer_remove_stale FUNCTION MODE ARCH: after a failed build,
# removes from $TPUC_ROOT/lib the library the build was to replace: left
# there, it would run beside libraries built from newer sources.
_custom_layer_remove_stale() {
  case $2 in
    plugin) set -- "$1" "$TPUC_ROOT/lib/libplugin_custom.so" ;;
    backend) set -- "$1" "$TPUC_ROOT/lib/libbackend_custom.so" ;;
    cmodel) set -- "$1" "$TPUC_ROOT/lib/libcmodel_custom_$3.so" "$TPUC_ROOT/lib/libcmodel_custom_${3#bm}.so" ;;
    customcpuop) set -- "$1" "$TPUC_ROOT/lib/libcustomapop.so" "$TPUC_ROOT/lib/libcustomapop.so.1.0.0" \
      "$TPUC_ROOT/lib/libcustomcpuop.so" ;;
    *) return 0 ;;
  esac
  _custom_layer_fn=$1
  shift
  for _custom_layer_file in "$@"; do
    if [ -e "$_custom_layer_file" ] || [ -L "$_custom_layer_file" ]; then
      command rm -f "$_custom_layer_file" &&
        _custom_layer_error "$_custom_layer_fn: removed $_custom_layer_file: it was built from older sources and must not run beside newer libraries"
    fi
  done
}

# _custom_layer_build FUNCTION MODE ARCH TREE_NAME: configure, build in
# parallel, install into $TPUC_ROOT/lib, report.
_custom_layer_build() {
  _custom_layer_fn=$1
  _custom_layer_mode=$2
  _custom_layer_chip=$3
  _custom_layer_tree="$(_custom_layer_build_root)/$4"
  _custom_layer_check_env "$_custom_layer_fn" || return 1
  echo "$_custom_layer_fn: $_custom_layer_mode ($_custom_layer_chip) in $_custom_layer_tree"
  # Two shells building the same tree at once take turns (the lock is held
  # until this function's subshell exits).
  command mkdir -p "${_custom_layer_tree%/*}" || return 1
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$_custom_layer_tree.lock"
    if ! command flock -n 9; then
      echo "$_custom_layer_fn: waiting for another build in $_custom_layer_tree"
      command flock 9 || return 1
    fi
  fi
  if ! _custom_layer_configure "$_custom_layer_fn" "$_custom_layer_tree" "$_custom_layer_mode" "$_custom_layer_chip"; then
    _custom_layer_remove_stale "$_custom_layer_fn" "$_custom_layer_mode" "$_custom_layer_chip"
    return 1
  fi
  if ! command cmake --build "$_custom_layer_tree" --parallel "$(_custom_layer_jobs)"; then
    _custom_layer_error "$_custom_layer_fn: build failed in $_custom_layer_tree"
    _custom_layer_remove_stale "$_custom_layer_fn" "$_custom_layer_mode" "$_custom_layer_chip"
    return 1
  fi
  # CMake skips a file whose time stamp is within a second of the installed
  # one's, however different the contents: always copy, and tell "installed"
  # from "up to date" by the contents.
  _custom_layer_manifest="$_custom_layer_tree/install_manifest.txt"
  _custom_layer_before=
  if [ -f "$_custom_layer_manifest" ]; then
    while IFS= read -r _custom_layer_file || [ -n "$_custom_layer_file" ]; do
      [ -f "$_custom_layer_file" ] && _custom_layer_before="$_custom_layer_before$(command cksum <"$_custom_layer_file") $_custom_layer_file
"
    done <"$_custom_layer_manifest"
  fi
  if ! CMAKE_INSTALL_ALWAYS=1 command cmake --install "$_custom_layer_tree" >"$_custom_layer_tree/install.log" 2>&1; then
    command cat "$_custom_layer_tree/install.log" >&2
    _custom_layer_error "$_custom_layer_fn: installing into $TPUC_ROOT failed"
    return 1
  fi
  while IFS= read -r _custom_layer_file || [ -n "$_custom_layer_file" ]; do
    if printf '%s' "$_custom_layer_before" | command grep -qxF "$(command cksum <"$_custom_layer_file") $_custom_layer_file"; then
      echo "  up to date $_custom_layer_file"
    else
      echo "  installed  $_custom_layer_file"
    fi
  done <"$_custom_layer_manifest"
}

# ---- the vendor functions ---------------------------------------------------

rebuild_custom_plugin() (
  _custom_layer_sane_shell
  chip=$(_custom_layer_arch rebuild_custom_plugin "$@") || exit 1
  _custom_layer_build rebuild_custom_plugin plugin "$chip" plugin
)

rebuild_custom_backend() (
  _custom_layer_sane_shell
  chip=$(_custom_layer_arch rebuild_custom_backend "$@") || exit 1
  _custom_layer_build rebuild_custom_backend backend "$chip" backend
)

rebuild_custom_firmware_cmodel() (
  _custom_layer_sane_shell
  chip=$(_custom_layer_arch rebuild_custom_firmware_cmodel "$@") || exit 1
  _custom_layer_build rebuild_custom_firmware_cmodel cmodel "$chip" "cmodel-$chip"
)

# The three libraries do not depend on each other: their trees build side
# by side, each into its own log, shown in order once it is done.
rebuild_custom_lib_cmodel() (
  _custom_layer_sane_shell
  chip=$(_custom_layer_arch rebuild_custom_lib_cmodel "$@") || exit 1
  # Installs the SDK first when needed, before anything runs in parallel.
  _custom_layer_check_env rebuild_custom_lib_cmodel || exit 1
  logs=$(_custom_layer_build_root)/.rebuild-$$
  command mkdir -p "$logs" || exit 1
  rebuild_custom_plugin "$chip" >"$logs/plugin" 2>&1 &
  plugin_pid=$!
  rebuild_custom_backend "$chip" >"$logs/backend" 2>&1 &
  backend_pid=$!
  rebuild_custom_firmware_cmodel "$chip" >"$logs/firmware" 2>&1 &
  firmware_pid=$!
  # A project with AP ops gets their run-time library too, so its models
  # and tests run after this one command.
  apop_pid=
  if _custom_layer_has_ap_ops; then
    rebuild_custom_apop_x86 >"$logs/apop" 2>&1 &
    apop_pid=$!
  fi
  failed=
  wait "$plugin_pid" || failed="$failed plugin"
  command cat "$logs/plugin"
  wait "$backend_pid" || failed="$failed backend"
  command cat "$logs/backend"
  wait "$firmware_pid" || failed="$failed firmware"
  command cat "$logs/firmware"
  if [ -n "$apop_pid" ]; then
    wait "$apop_pid" || failed="$failed AP-ops"
    command cat "$logs/apop"
  fi
  command rm -rf "$logs"
  if [ -n "$failed" ]; then
    _custom_layer_error "rebuild_custom_lib_cmodel: failed:$failed (see the messages above)"
    exit 1
  fi
  echo "rebuild_custom_lib_cmodel: plugin, backend${apop_pid:+, AP ops} and $chip cmodel firmware are up to date in $TPUC_ROOT/lib"
)

# _custom_layer_python_front_end FUNCTION: when the project has Python
# tests (test_if/unittest/test_*.py) and the SDK in the default TPUC_ROOT was
# built without its Python front end (the main job, scripts/demo.sh, builds
# the SDK alone), adds the front end to that build and installs it.
_custom_layer_python_front_end() {
  if [ "$CUSTOM_LAYER_PATH" = "$TPU_SDK_PATH" ]; then
    set -- "$1" "$CUSTOM_LAYER_PATH/customlayer/test_if/unittest"
  else
    set -- "$1" "$CUSTOM_LAYER_PATH/test_if/unittest"
  fi
  for _custom_layer_file in "$2"/test_*.py; do
    [ -f "$_custom_layer_file" ] || return 0
    break
  done
  for _custom_layer_file in "$TPUC_ROOT"/python/_tpu_sdk*.so; do
    [ -f "$_custom_layer_file" ] && return 0
    break
  done
  # Another TPUC_ROOT is the user's installation: its configure step says
  # what is missing.
  [ "$TPUC_ROOT" = "$TPU_SDK_PATH/install" ] || return 0
  echo "$1: the project's Python tests need the SDK's Python front end, which $TPUC_ROOT lacks;" \
    "adding it (scripts/build.sh -DTPU_SDK_BUILD_PYTHON=ON)"
  if ! sh "$TPU_SDK_PATH/scripts/build.sh" "$TPU_SDK_PATH/build" -DTPU_SDK_BUILD_PYTHON=ON; then
    _custom_layer_error "$1: building the SDK's Python front end failed (scripts/build.sh)"
    return 1
  fi
}

run_custom_unittest() (
  _custom_layer_sane_shell
  chip=$(_custom_layer_arch run_custom_unittest "$@") || exit 1
  rebuild_custom_lib_cmodel "$chip" || exit 1
  _custom_layer_python_front_end run_custom_unittest || exit 1
  # One tree for both chips: the chip only changes the tests' environment,
  # so switching it reconfigures without recompiling.
  _custom_layer_build run_custom_unittest unittest "$chip" unittest || exit 1
  tree="$(_custom_layer_build_root)/unittest"
  echo "run_custom_unittest: running the $chip tests in $tree"
  if command ctest --test-dir "$tree" --output-on-failure --no-tests=error -j "$(_custom_layer_jobs)"; then
    exit 0
  fi
  # Tell "no tests" from "tests failed": `ctest -N` lists them.
  if command ctest --test-dir "$tree" -N 2>/dev/null | command grep -q '^Total Tests: 0$'; then
    _custom_layer_error "run_custom_unittest: no tests exist for $CUSTOM_LAYER_PATH: add op_cases.json, unittest/*_test.cc or test_if/unittest/test_*.py files"
  else
    _custom_layer_error "run_custom_unittest: $chip tests failed (see the output above; rerun them with ctest --test-dir $tree --output-on-failure)"
  fi
  exit 1
)

# new_custom_op NAME: writes a new element-wise op (y = x * scale + bias,
# global and local) into the op project, every file it needs included, so
# that it builds and passes at once (scripts/new_custom_op.py, which says
# what it wrote). A shell function, like the rebuilds, because it acts on
# the project they build, $CUSTOM_LAYER_PATH; the work is Python's, which
# edits op_cases.json as JSON. Refuses (and changes nothing) a name that is
# no C identifier, a keyword, too long or already used.
new_custom_op() (
  _custom_layer_sane_shell
  if [ $# -ne 1 ] || [ -z "$1" ]; then
    _custom_layer_error "new_custom_op: expected one op name (usage: new_custom_op <name>)"
    exit 1
  fi
  if ! _custom_layer_is_project "${CUSTOM_LAYER_PATH:-}"; then
    _custom_layer_error "new_custom_op: CUSTOM_LAYER_PATH='${CUSTOM_LAYER_PATH:-}' is no op project; source envsetup.sh again"
    exit 1
  fi
  if ! command -v python3 >/dev/null 2>&1; then
    _custom_layer_error "new_custom_op: needs python3 (apt-get install python3)"
    exit 1
  fi
  command python3 "$TPU_SDK_PATH/scripts/new_custom_op.py" --project "$CUSTOM_LAYER_PATH" -- "$1"
)

# Device firmware (SoC / PCIe): not buildable with this SDK.
_custom_layer_no_device() {
  _custom_layer_error "$1: not available in this SDK."
  _custom_layer_error "  Device firmware (lib<chip>_kernel_module_custom_$2.so) links the vendor's firmware core"
  _custom_layer_error "  (libbm1684x_kernel_module.a, libbmtpulv60_kernel_module.a) and is built with the vendor's"
  _custom_layer_error "  aarch64 / RISC-V cross toolchains; this SDK ships neither. Here custom ops run on the"
  _custom_layer_error "  cmodel: use rebuild_custom_firmware_cmodel [arch] (or rebuild_custom_lib_cmodel [arch])."
  _custom_layer_error "  The same op sources build unchanged with the vendor's flow for a device."
  if [ "$2" = pcie ]; then
    _custom_layer_error "  (The vendor flow has no PCIe firmware for bm1688 either.)"
  fi
  return 1
}
rebuild_custom_firmware_soc() { _custom_layer_no_device rebuild_custom_firmware_soc soc; }
rebuild_custom_firmware_pcie() { _custom_layer_no_device rebuild_custom_firmware_pcie pcie; }
rebuild_custom_lib_soc() { _custom_layer_no_device rebuild_custom_lib_soc soc; }
rebuild_custom_lib_pcie() { _custom_layer_no_device rebuild_custom_lib_pcie pcie; }

# AP (host CPU) custom ops: the run-time library libcustomapop.so and its
# copy libcustomcpuop.so from ap_src/ (cmake/custom_layer_ap.cmake), for
# this host (x86) or for an aarch64 host (cross-compiled; it cannot run
# here). The chip argument is accepted and unused, as the vendor's; the
# apop names drop it.
_custom_layer_ap() {
  _custom_layer_fn=$1
  _custom_layer_ap_arch=$2
  shift 2
  _custom_layer_arch "$_custom_layer_fn" "$@" >/dev/null || return 1
  if [ "$_custom_layer_ap_arch" = aarch64 ] && ! command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
    _custom_layer_error "$_custom_layer_fn: needs the aarch64 cross compiler aarch64-linux-gnu-g++, which is not"
    _custom_layer_error "  installed (Debian: apt-get install g++-aarch64-linux-gnu)"
    return 1
  fi
  # The chip was only checked: the library does not depend on it.
  _custom_layer_build "$_custom_layer_fn" customcpuop "$_custom_layer_ap_arch" "apop-$_custom_layer_ap_arch"
}
rebuild_custom_cpuop_x86() (
  _custom_layer_sane_shell
  _custom_layer_ap rebuild_custom_cpuop_x86 x86 "$@"
)
rebuild_custom_cpuop_aarch64() (
  _custom_layer_sane_shell
  _custom_layer_ap rebuild_custom_cpuop_aarch64 aarch64 "$@"
)
rebuild_custom_apop_x86() (
  _custom_layer_sane_shell
  _custom_layer_ap rebuild_custom_apop_x86 x86
)
rebuild_custom_apop_aarch64() (
  _custom_layer_sane_shell
  _custom_layer_ap rebuild_custom_apop_aarch64 aarch64
)

# ---- the environment ----------------------------------------------------------
TPU_SDK_PATH=${_custom_layer_self%/*}
export TPU_SDK_PATH

# CUSTOM_LAYER_PATH, the op project: kept when the user (or the vendor's
# tpu-mlir envsetup) set it to an op project; otherwise the vendor-layout
# project the shell is in, else this SDK's own sample ops. A value this file
# chose on an earlier sourcing is chosen again.
_custom_layer_project=
if [ -n "${CUSTOM_LAYER_PATH:-}" ] && [ "${CUSTOM_LAYER_PATH:-}" != "${_custom_layer_set_project:-}" ]; then
  if _custom_layer_is_project "$CUSTOM_LAYER_PATH"; then
    _custom_layer_project=$(cd "$CUSTOM_LAYER_PATH" && pwd -P)
  else
    echo "envsetup.sh: ignoring CUSTOM_LAYER_PATH=$CUSTOM_LAYER_PATH: not an op project (no register_ops.cmake" \
      "with src/ or customlayer/src/)" >&2
  fi
fi
if [ -z "$_custom_layer_project" ]; then
  _custom_layer_project=$(_custom_layer_enclosing_project "$(pwd -P)")
fi
if [ -z "$_custom_layer_project" ]; then
  _custom_layer_project=$TPU_SDK_PATH
fi
CUSTOM_LAYER_PATH=$_custom_layer_project
_custom_layer_set_project=$CUSTOM_LAYER_PATH
unset _custom_layer_project
export CUSTOM_LAYER_PATH

# TPUC_ROOT: kept when the user set it; the default is replaced when this
# file (or another clone's) set it on an earlier sourcing.
# Sourced through an installation's customlayer/envsetup.sh, the default is
# that installation (_custom_layer_default_root, set by that file).
if [ -z "${TPUC_ROOT:-}" ] || [ "${TPUC_ROOT:-}" = "${_custom_layer_set_root:-}" ]; then
  TPUC_ROOT=${_custom_layer_default_root:-$TPU_SDK_PATH/install}
  _custom_layer_set_root=$TPUC_ROOT
else
  case $TPUC_ROOT in
    /*) ;;
    *) TPUC_ROOT=$PWD/$TPUC_ROOT ;;
  esac
  while :; do
    case $TPUC_ROOT in
      ?*/) TPUC_ROOT=${TPUC_ROOT%/} ;;
      *) break ;;
    esac
  done
fi
export TPUC_ROOT

# PATH and LD_LIBRARY_PATH: $TPUC_ROOT/bin and $TPUC_ROOT/lib first (a stale
# copy elsewhere must not win); what an earlier sourcing added is removed.
if [ -n "${_custom_layer_added_bin:-}" ]; then
  PATH=$(_custom_layer_path_remove "${PATH:-}" "$_custom_layer_added_bin")
fi
PATH=$(_custom_layer_path_prepend "${PATH:-}" "$TPUC_ROOT/bin")
_custom_layer_added_bin=$TPUC_ROOT/bin
export PATH
if [ -n "${_custom_layer_added_lib:-}" ]; then
  LD_LIBRARY_PATH=$(_custom_layer_path_remove "${LD_LIBRARY_PATH:-}" "$_custom_layer_added_lib")
fi
LD_LIBRARY_PATH=$(_custom_layer_path_prepend "${LD_LIBRARY_PATH:-}" "$TPUC_ROOT/lib")
_custom_layer_added_lib=$TPUC_ROOT/lib
export LD_LIBRARY_PATH

# PYTHONPATH: the SDK's Python front end (import transform.TpuLang, tpu_sdk)
# and the op project's python/ (my_tpulang_layer.py), first, once.
if [ -n "${_custom_layer_added_python_sdk:-}" ]; then
  PYTHONPATH=$(_custom_layer_path_remove "${PYTHONPATH:-}" "$_custom_layer_added_python_sdk")
fi
if [ -n "${_custom_layer_added_python_project:-}" ]; then
  PYTHONPATH=$(_custom_layer_path_remove "${PYTHONPATH:-}" "$_custom_layer_added_python_project")
fi
if [ "$CUSTOM_LAYER_PATH" = "$TPU_SDK_PATH" ]; then
  _custom_layer_added_python_project=$CUSTOM_LAYER_PATH/customlayer/python
else
  _custom_layer_added_python_project=$CUSTOM_LAYER_PATH/python
fi
_custom_layer_added_python_sdk=$TPUC_ROOT/python
PYTHONPATH=$(_custom_layer_path_prepend "${PYTHONPATH:-}" "$_custom_layer_added_python_project")
PYTHONPATH=$(_custom_layer_path_prepend "$PYTHONPATH" "$_custom_layer_added_python_sdk")
export PYTHONPATH

# The SDK's Python module (_tpu_sdk) is built for one interpreter (recorded
# in TpuSdkPython.cmake); a `python3` first on PATH that is another one (a
# pyenv or conda python) cannot import it: say so, and which one to use.
_custom_layer_python_file=$TPUC_ROOT/lib/cmake/TpuSdk/TpuSdkPython.cmake
if [ -f "$_custom_layer_python_file" ]; then
  _custom_layer_python_built=$(command sed -n 's/^set(TPU_SDK_PYTHON_EXECUTABLE "\(.*\)")$/\1/p' "$_custom_layer_python_file")
  _custom_layer_python_path=$(command -v python3 2>/dev/null || :)
  if [ -n "$_custom_layer_python_built" ]; then
    _custom_layer_python_here=
    if [ -n "$_custom_layer_python_path" ]; then
      _custom_layer_python_here=$(command python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null || :)
    fi
    _custom_layer_python_want=$(command readlink -f -- "$_custom_layer_python_built" 2>/dev/null || printf '%s' "$_custom_layer_python_built")
    if [ -z "$_custom_layer_python_path" ]; then
      echo "envsetup.sh: no python3 on PATH; the SDK's Python front end (transform.TpuLang, tpu_sdk) was built for" \
        "$_custom_layer_python_built: run Python code with that interpreter" >&2
    elif [ "$_custom_layer_python_here" != "$_custom_layer_python_want" ]; then
      echo "envsetup.sh: python3 on PATH is $_custom_layer_python_path (${_custom_layer_python_here:-it does not run})," \
        "not the interpreter the SDK's Python module was built for: import transform.TpuLang / tpu_sdk will fail" \
        "with it. Use $_custom_layer_python_built (run it by that path, or put ${_custom_layer_python_built%/*} first" \
        "on PATH); run_custom_unittest and the SDK's commands use it already." >&2
    fi
  fi
  unset _custom_layer_python_built _custom_layer_python_path _custom_layer_python_here _custom_layer_python_want
fi
unset _custom_layer_python_file

# TPUKERNEL_CUSTOM_FIRMWARE_PATH: a directory (never the vendor's shared
# libcmodel_custom.so symlink); kept when the user set it.
if [ -z "${TPUKERNEL_CUSTOM_FIRMWARE_PATH:-}" ] ||
  [ "${TPUKERNEL_CUSTOM_FIRMWARE_PATH:-}" = "${_custom_layer_set_firmware:-}" ]; then
  TPUKERNEL_CUSTOM_FIRMWARE_PATH=$TPUC_ROOT/lib
  _custom_layer_set_firmware=$TPUKERNEL_CUSTOM_FIRMWARE_PATH
elif [ ! -d "$TPUKERNEL_CUSTOM_FIRMWARE_PATH" ]; then
  echo "envsetup.sh: keeping TPUKERNEL_CUSTOM_FIRMWARE_PATH=$TPUKERNEL_CUSTOM_FIRMWARE_PATH, which is not a" \
    "directory: that one file serves every chip. Unset it and source again to pick" \
    "libcmodel_custom_<chip>.so in \$TPUC_ROOT/lib per process." >&2
fi
export TPUKERNEL_CUSTOM_FIRMWARE_PATH

if [ "$CUSTOM_LAYER_PATH" = "$TPU_SDK_PATH" ]; then
  _custom_layer_what="CUSTOM_LAYER_PATH=$CUSTOM_LAYER_PATH (the SDK's sample ops)"
else
  _custom_layer_what="CUSTOM_LAYER_PATH=$CUSTOM_LAYER_PATH (your op project; SDK in $TPU_SDK_PATH)"
fi
if [ -f "$TPUC_ROOT/lib/cmake/TpuSdk/TpuSdkConfig.cmake" ]; then
  echo "envsetup.sh: $_custom_layer_what TPUC_ROOT=$TPUC_ROOT"
elif [ "$TPUC_ROOT" = "$TPU_SDK_PATH/install" ]; then
  echo "envsetup.sh: $_custom_layer_what TPUC_ROOT=$TPUC_ROOT (not installed yet: the first rebuild_custom_* builds and installs it)"
else
  echo "envsetup.sh: $_custom_layer_what TPUC_ROOT=$TPUC_ROOT (no SDK installed there yet)" >&2
fi
unset _custom_layer_what

fi
unset _custom_layer_self
# The status of `source envsetup.sh` itself.
if [ -n "$_custom_layer_failed" ]; then
  unset _custom_layer_failed
  return 1 2>/dev/null || exit 1
fi
unset _custom_layer_failed
