#!/bin/sh
# Quick start, tests: set up, build, and run the whole test suite.
# Builds into build/, the tree the main job (scripts/demo.sh) uses, with the
# tests, benchmarks, in-tree sample ops and Python front end turned on: after
# the main job only those are compiled, and the main job after this rebuilds
# nothing. With --sanitize, builds into build-sanitize/ with
# AddressSanitizer and UndefinedBehaviorSanitizer (installing nothing) and
# runs the suite there.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/setup.sh"
# The test-only packages (a browser, PyTorch: large downloads) install while
# the build compiles, which needs none of them; the tests wait for them.
packages_log=$(mktemp "${TMPDIR:-/tmp}/tpu-sdk-test-packages.XXXXXX")
sh "$root/scripts/setup.sh" --tests-only >"$packages_log" 2>&1 &
packages_pid=$!
everything="-DTPU_SDK_BUILD_TESTS=ON -DTPU_SDK_BUILD_SAMPLE_OPS=ON -DTPU_SDK_BUILD_PYTHON=ON"
if [ "${1:-}" = "--sanitize" ]; then
  build=$root/build-sanitize
  # shellcheck disable=SC2086
  sh "$root/scripts/build.sh" --no-install "$build" -DTPU_SDK_SANITIZE=ON $everything -DTPU_SDK_BUILD_BENCH=OFF
else
  build=$root/build
  # shellcheck disable=SC2086
  sh "$root/scripts/build.sh" "$build" $everything -DTPU_SDK_BUILD_BENCH=ON
fi
packages_status=0
wait "$packages_pid" || packages_status=$?
cat "$packages_log"
rm -f "$packages_log"
if [ "$packages_status" != 0 ]; then
  echo "test: installing the test-only packages failed (above); the tests need them" >&2
  exit 1
fi
echo "test: running the tests in $build"
# --progress: on a terminal, one line rewritten per test instead of two.
ctest --test-dir "$build" --output-on-failure --no-tests=error --progress -j"${JOBS:-$(nproc 2>/dev/null || echo 2)}" \
  --output-junit "$build/ctest-junit.xml"
# Everything is built and installed here, so a skipped test means a missing
# fixture, tool or setting, not a pass: only skips about the host's processor
# are accepted (scripts/check_skipped_tests.py).
python3 "$root/scripts/check_skipped_tests.py" "$build/ctest-junit.xml"
