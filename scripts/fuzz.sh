#!/bin/sh
# Fuzzes the model-file reader, the .bmodel reader (and its device-module
# ELF check) and the .npy parser with libFuzzer for a bounded time:
#   scripts/fuzz.sh [seconds, default 60: the targets run side by side]
#
# Builds fuzz/ (its own CMake project, clang with -fsanitize=fuzzer,address,
# undefined) into build-fuzz/, writes a seed corpus of valid files from each
# target's --write-seeds mode, then runs each target for the given time.
# New interesting inputs accumulate in build-fuzz/corpus/<target>/ (kept
# between runs); a finding is saved as build-fuzz/artifacts/<target>-crash-*
# (or leak-*, timeout-*, oom-*) and makes the script exit non-zero.
# Needs the Debian packages clang and libclang-rt-14-dev (scripts/setup.sh
# installs the rest). JOBS sets the build parallelism (default 2).
set -eu
seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-fuzz
CC=${FUZZ_CC:-clang} CXX=${FUZZ_CXX:-clang++} \
  cmake -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${JOBS:-2}"
# The targets fuzz side by side (the machine's cores shared between them),
# each into its own log; the logs' final statistics are printed at the end,
# and a target that found something prints the end of its log.
targets="model_file_fuzz bmodel_fuzz npy_fuzz"
for target in $targets; do
  dict=$root/fuzz/${target%_fuzz}.dict
  seeds=$build/seeds/$target
  corpus=$build/corpus/$target
  rm -rf "$seeds"
  mkdir -p "$corpus" "$build/artifacts"
  "$build/$target" --write-seeds="$seeds"
  echo "fuzzing $target for ${seconds}s (log: $build/$target.log)"
  "$build/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -dict="$dict" -artifact_prefix="$build/artifacts/$target-" \
    -print_final_stats=1 "$corpus" "$seeds" >"$build/$target.log" 2>&1 &
  echo $! >"$build/$target.pid"
done
found=0
for target in $targets; do
  status=0
  wait "$(cat "$build/$target.pid")" || status=$?
  rm -f "$build/$target.pid"
  if [ "$status" = 0 ]; then
    echo "$target: nothing found; $(grep -E '^stat::number_of_executed_units' "$build/$target.log" || echo 'no statistics')"
  else
    echo "$target: FOUND A FAULT (exit $status); the end of its log:"
    tail -n 60 "$build/$target.log"
    found=1
  fi
done
exit $found
