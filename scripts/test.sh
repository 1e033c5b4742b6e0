#!/bin/sh
# Quick start, tests: set up, build, and run the whole test suite.
# With --sanitize, builds into build-sanitize/ with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the suite there.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/setup.sh" --tests
if [ "${1:-}" = "--sanitize" ]; then
  build=$root/build-sanitize
  cmake -S "$root" -B "$build" -DTPU_SDK_SANITIZE=ON -DTPU_SDK_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" -j2
else
  build=$root/build
  sh "$root/scripts/build.sh" "$build"
fi
ctest --test-dir "$build" --output-on-failure --no-tests=error -j2
