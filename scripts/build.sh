#!/bin/sh
# Configures and builds the SDK into build/ (or the directory given), then
# installs it into install/ (the default TPUC_ROOT) unless --no-install.
#   sh scripts/build.sh [--no-install] [build dir] [cmake arguments...]
#
# A new tree is made with Ninja when it is installed, and for the SDK alone:
# the libraries, the tools and the installed package, without the tests,
# benchmarks, sample ops built in the tree and the Python front end. Those
# are what the CMake options TPU_SDK_BUILD_TESTS, _BENCH, _SAMPLE_OPS and
# _PYTHON turn on, given as arguments (scripts/test.sh gives all four). An
# existing tree keeps the options it has: the main job after the tests
# rebuilds nothing, and the tests after the main job only add their part.
#
# The build shows one progress line ("[n/N] what"), rewritten in place on a
# terminal and every tenth of the way otherwise; the compiler's output goes
# to <build dir>/build.log, whose failing part is printed when the build
# fails. JOBS sets the parallelism (default: the number of cores).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
install=yes
if [ "${1:-}" = "--no-install" ]; then
  install=no
  shift
fi
build=${1:-$root/build}
[ $# -gt 0 ] && shift
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

if [ ! -f "$build/CMakeCache.txt" ]; then
  # The options first, so that the caller's -D...=ON after them win.
  set -- -DTPU_SDK_BUILD_TESTS=OFF -DTPU_SDK_BUILD_BENCH=OFF -DTPU_SDK_BUILD_SAMPLE_OPS=OFF \
    -DTPU_SDK_BUILD_PYTHON=OFF "$@"
  if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then
    set -- -G Ninja "$@"
  fi
fi
mkdir -p "$build"
log=$build/build.log
echo "build: configuring $build (log: $log)"
if ! cmake -S "$root" -B "$build" "$@" >"$log" 2>&1; then
  cat "$log" >&2
  echo "build: configuring $build failed (log: $log)" >&2
  exit 1
fi

# Ninja prints "[n/N] description" per step, make "[ nn%] description":
# both become the progress line. The description loses the words every
# step shares ("Building CXX object", CMake's target directories).
progress() {
  awk -v tty="$1" -v width="$2" '
    function show(text) {
      sub(/Building (C|CXX) object /, "compiling ", text)
      gsub(/CMakeFiles\/[^\/]*\.dir\//, "", text)
      if (tty) {
        printf "\r%s\033[K", substr(text, 1, width - 1)
        fflush()
      }
    }
    /^\[[0-9]+\/[0-9]+\] / {
      split(substr($1, 2, length($1) - 2), n, "/")
      show($0)
      # Off a terminal, a line every tenth of the steps keeps a CI log short.
      tenth = int(10 * n[1] / n[2])
      if (!tty && tenth > last) {
        last = tenth
        printf "build: %d of %d steps\n", n[1], n[2]
        fflush()
      }
      next
    }
    /^\[ *[0-9]+%\] / { show($0) }
    END { if (tty) printf "\r\033[K" }'
}
if [ -t 1 ]; then
  tty=1
  width=$(stty size 2>/dev/null </dev/tty | cut -d' ' -f2)
else
  tty=0
fi
echo "build: building with $jobs jobs (full output: $log)"
status_file=$build/.build-status
# The exit status of cmake --build, which the pipe into the progress line
# would hide from sh (no pipefail), comes back through a file.
{
  status=0
  cmake --build "$build" --parallel "$jobs" 2>&1 || status=$?
  echo "$status" >"$status_file"
} | tee -a "$log" | progress "$tty" "${width:-80}"
status=$(cat "$status_file")
rm -f "$status_file"
if [ "$status" != 0 ]; then
  # Ninja marks the step that failed with FAILED:; show from there (or the
  # end of the log), so CI's output names the error.
  if grep -q '^FAILED: ' "$log"; then
    sed -n '/^FAILED: /,$p' "$log" | head -n 80 >&2
  else
    tail -n 40 "$log" >&2
  fi
  echo "build: FAILED (full output: $log)" >&2
  exit 1
fi
warnings=$(grep -cE ':[0-9]+:[0-9]+: warning: ' "$log" || :)
if [ "${warnings:-0}" -gt 0 ]; then
  echo "build: done, with $warnings compiler warning(s): see $log"
else
  echo "build: done"
fi
if [ "$install" = yes ]; then
  cmake --install "$build" --prefix "$root/install" >>"$log" 2>&1 || {
    tail -n 20 "$log" >&2
    echo "build: installing into $root/install failed (log: $log)" >&2
    exit 1
  }
  echo "build: installed into $root/install"
fi
