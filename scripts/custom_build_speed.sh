#!/bin/bash
# Build speed of the custom-layer flow (issue 4, item 9): the clean build
# time of rebuild_custom_lib_cmodel and the incremental time after touching
# one kernel source. Target: incremental at most 20 % of clean.
#
# Usage: custom_build_speed.sh [arch] [kernel source to touch]
#   arch     bm1684x (default) or bm1688
#   source   default: the first customlayer/src/tpu_impl_*.c (else *.c)
#
# The builds run in fresh trees under a temporary CUSTOM_LAYER_BUILD_ROOT,
# so the user's trees (build-custom/) are not touched; the libraries are
# installed into $TPUC_ROOT/lib as rebuild_custom_lib_cmodel always does.
# The SDK is installed first when it is missing, outside the timing.
# Prints both times and the ratio; a missed target is a WARNING line, and
# the exit status is 0 either way (timings on a shared machine are noisy).
# Non-zero only when a build fails. INCREMENTAL_RUNS (default 3) sets how
# many incremental builds are timed; the median counts.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-bm1684x}
touch_source=${2:-}
runs=${INCREMENTAL_RUNS:-3}

# shellcheck source=/dev/null
. "$root/envsetup.sh" >/dev/null || exit 1
_custom_layer_arch custom_build_speed.sh "$arch" >/dev/null || exit 2
_custom_layer_check_env custom_build_speed.sh || exit 1

if [ -z "$touch_source" ]; then
  for candidate in "$root"/customlayer/src/tpu_impl_*.c "$root"/customlayer/src/*.c; do
    if [ -f "$candidate" ]; then
      touch_source=$candidate
      break
    fi
  done
fi
if [ -z "$touch_source" ] || [ ! -f "$touch_source" ]; then
  echo "custom_build_speed.sh: no kernel source to touch (customlayer/src/*.c)" >&2
  exit 1
fi

CUSTOM_LAYER_BUILD_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/custom-build-speed.XXXXXX")
export CUSTOM_LAYER_BUILD_ROOT
log=$CUSTOM_LAYER_BUILD_ROOT.log
trap 'rm -rf "$CUSTOM_LAYER_BUILD_ROOT" "$log"' EXIT

# timed: runs rebuild_custom_lib_cmodel and prints "<wall s> <CPU s>" (CPU:
# user + system of every process it ran).
timed() {
  local t
  t=$( { TIMEFORMAT='%R %U %S'; time rebuild_custom_lib_cmodel "$arch" >>"$log" 2>&1; } 2>&1) || {
    cat "$log" >&2
    echo "custom_build_speed.sh: rebuild_custom_lib_cmodel $arch failed" >&2
    return 1
  }
  echo "$t" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

echo "custom_build_speed: rebuild_custom_lib_cmodel $arch, $(_custom_layer_jobs) jobs, generator:" \
  "$(if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then echo Ninja; else echo "${CMAKE_GENERATOR:-Unix Makefiles}"; fi)"
result=$(timed) || exit 1
read -r clean clean_cpu <<<"$result"
echo "clean build:        ${clean} s wall, ${clean_cpu} s CPU (fresh trees in $CUSTOM_LAYER_BUILD_ROOT)"

times=""
cpu_times=""
for _ in $(seq "$runs"); do
  touch "$touch_source"
  result=$(timed) || exit 1
  read -r incremental incremental_cpu <<<"$result"
  times="$times $incremental"
  cpu_times="$cpu_times $incremental_cpu"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# shellcheck disable=SC2086
wall=$(median $times)
# shellcheck disable=SC2086
cpu=$(median $cpu_times)
echo "incremental build:  ${wall} s wall, ${cpu} s CPU (medians of ${runs} runs, wall:${times};" \
  "after touching ${touch_source#"$root"/})"

ratio=$(awk -v i="$wall" -v c="$clean" 'BEGIN { printf "%.1f", 100 * i / c }')
cpu_ratio=$(awk -v i="$cpu" -v c="$clean_cpu" 'BEGIN { printf "%.1f", 100 * i / c }')
echo "ratio:              ${ratio} % of clean wall time (target: at most 20 %); CPU time: ${cpu_ratio} %"
if awk -v r="$ratio" 'BEGIN { exit !(r > 20) }'; then
  echo "WARNING: the incremental build takes ${ratio} % of the clean build's wall time, above the 20 % target"
fi
exit 0
