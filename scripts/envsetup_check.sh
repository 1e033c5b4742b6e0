#!/bin/bash
# Checks envsetup.sh the way users meet it (CI runs this after the main
# job, which installed the SDK and the sample ops into install/):
#   - sourced under set -euo pipefail, from another directory, through a
#     symlink, twice: variables set once, nothing duplicated in PATH;
#   - every function leaves the caller's directory, shell options and
#     environment as they were, and a rebuild with nothing changed compiles
#     nothing;
#   - wrong arguments and the device-firmware functions fail clearly;
#   - the AP (host CPU) op functions build the sample top-k's run-time
#     library under the vendor's names (rebuild_custom_lib_cmodel builds it
#     too, the samples having ap_src/), and the aarch64 one without a cross
#     compiler names the package to install.
# Usage: bash scripts/envsetup_check.sh   (exit 0 = every check passed)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$root/envsetup.sh" "$work/linked-envsetup.sh"
failures=0
check() {
  local what=$1
  shift
  if "$@" >"$work/out.log" 2>&1; then
    echo "ok    $what"
  else
    echo "FAIL  $what"
    sed 's/^/      /' "$work/out.log"
    failures=$((failures + 1))
  fi
}

check "sourced strictly, through a symlink, twice" bash -c '
  set -euo pipefail
  cd "$1"
  unset TPUC_ROOT TPUKERNEL_CUSTOM_FIRMWARE_PATH
  source ./linked-envsetup.sh >/dev/null
  source ./linked-envsetup.sh >/dev/null
  [ "$CUSTOM_LAYER_PATH" = "$2" ]
  [ "$TPU_SDK_PATH" = "$2" ]
  [ "$TPUC_ROOT" = "$2/install" ]
  [ "$TPUKERNEL_CUSTOM_FIRMWARE_PATH" = "$2/install/lib" ]
  [ "$(printf %s "$PATH" | tr : "\n" | grep -cx "$2/install/bin")" = 1 ]
  [ "$(printf %s "$LD_LIBRARY_PATH" | tr : "\n" | grep -cx "$2/install/lib")" = 1 ]
' check "$work" "$root"

check "a CUSTOM_LAYER_PATH that is no op project is refused by name; the samples are used" bash -c '
  set -eu
  CUSTOM_LAYER_PATH=$2; export CUSTOM_LAYER_PATH
  msg=$(source "$1/envsetup.sh" 2>&1 >/dev/null)
  printf "%s" "$msg" | grep -q "ignoring CUSTOM_LAYER_PATH=$2: not an op project"
  source "$1/envsetup.sh" >/dev/null 2>&1
  [ "$CUSTOM_LAYER_PATH" = "$1" ]
' check "$root" "$work"

check "a TPUC_ROOT set before sourcing is kept" bash -c '
  set -eu
  TPUC_ROOT=/opt/somewhere; export TPUC_ROOT
  source "$1/envsetup.sh" >/dev/null
  [ "$TPUC_ROOT" = /opt/somewhere ]
' check "$root"

check "functions leave directory, options and environment alone; no-op rebuild compiles nothing" bash -c '
  set -euo pipefail
  set -o noclobber
  source "$1/envsetup.sh" >/dev/null
  cd "$2"
  before_opts=$(set -o); before_env=$(env | grep -v "^_=" | sort)
  rebuild_custom_lib_cmodel >/dev/null
  out=$(rebuild_custom_lib_cmodel bm1684x)
  [ "$PWD" = "$2" ]
  [ "$(set -o)" = "$before_opts" ]
  [ "$(env | grep -v "^_=" | sort)" = "$before_env" ]
  [ -z "${CUSTOM_LAYER_DEV_MODE:-}" ]
  if printf "%s\n" "$out" | grep -E "Building|Linking"; then exit 1; fi
  printf "%s\n" "$out" | grep -q "up to date"
' check "$root" "$work"

# Inside the checks: `refuse TEXT CMD...` fails the check when CMD succeeds
# or says nothing containing TEXT (a bare `! CMD` would not, under set -e).
refuse='refuse() { want=$1; shift; if out=$("$@" 2>&1); then echo "accepted: $*"; exit 1; fi
  case $out in *"$want"*) ;; *) echo "$*: expected \"$want\" in: $out"; exit 1 ;; esac; }'

check "unknown chip, extra arguments and device firmware are refused, saying why" bash -c "$refuse"'
  set -eu
  source "$1/envsetup.sh" >/dev/null
  refuse "unknown chip '"'"'bm1690'"'"': expected bm1684x (the default) or bm1688" rebuild_custom_plugin bm1690
  refuse "too many arguments (usage: rebuild_custom_backend [bm1684x|bm1688])" rebuild_custom_backend bm1684x extra
  refuse "rebuild_custom_firmware_pcie: not available in this SDK." rebuild_custom_firmware_pcie bm1688
  refuse "(The vendor flow has no PCIe firmware for bm1688 either.)" rebuild_custom_firmware_pcie bm1688
  refuse "rebuild_custom_lib_soc: not available in this SDK." rebuild_custom_lib_soc
  refuse "use rebuild_custom_firmware_cmodel [arch]" rebuild_custom_firmware_soc
  refuse "too many arguments (usage: rebuild_custom_cpuop_x86 [bm1684x|bm1688])" rebuild_custom_cpuop_x86 bm1684x extra
' check "$root"

check "the AP op functions build libcustomapop.so and libcustomcpuop.so into TPUC_ROOT" bash -c '
  set -eu
  source "$1/envsetup.sh" >/dev/null
  rebuild_custom_cpuop_x86 bm1688 >/dev/null
  out=$(rebuild_custom_apop_x86)
  printf "%s\n" "$out" | grep -q "up to date $TPUC_ROOT/lib/libcustomcpuop.so"
  for f in lib/libcustomapop.so lib/libcustomapop.so.1.0.0 lib/libcustomcpuop.so include/bmcpu.h include/customap_common.h; do
    [ -e "$TPUC_ROOT/$f" ] || { echo "$TPUC_ROOT/$f missing"; exit 1; }
  done
  nm -D --defined-only "$TPUC_ROOT/lib/libcustomcpuop.so" | grep -qw tpu_sdk_ap_op_type
  nm -D --defined-only "$TPUC_ROOT/lib/libplugin_custom.so" | grep -qw createLayerInstance
' check "$root"

if ! command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  check "without the aarch64 cross compiler the aarch64 AP build names the package" bash -c "$refuse"'
  set -eu
  source "$1/envsetup.sh" >/dev/null
  refuse "apt-get install g++-aarch64-linux-gnu" rebuild_custom_cpuop_aarch64
  refuse "rebuild_custom_apop_aarch64: needs the aarch64 cross compiler" rebuild_custom_apop_aarch64
' check "$root"
fi

check "an SDK missing from a non-default TPUC_ROOT is explained" bash -c "$refuse"'
  set -eu
  TPUC_ROOT=$2/no-sdk-here; export TPUC_ROOT
  source "$1/envsetup.sh" >/dev/null 2>&1
  refuse "rebuild_custom_plugin: no SDK installed in TPUC_ROOT=$2/no-sdk-here" rebuild_custom_plugin
' check "$root" "$work"

if [ "$failures" = 0 ]; then echo "envsetup.sh: every check passed"; else echo "envsetup.sh: $failures check(s) FAILED"; fi
[ "$failures" = 0 ]
