#!/bin/sh
# The README's standalone kernel test, run as the README writes it: the C
# block after "A standalone kernel test, `my_test.c`:" saved as my_test.c,
# and the indented `cc ...` line after it run with <prefix> replaced by a
# scratch installation, without LD_LIBRARY_PATH (the program must find
# libcmodel.so.0 by itself). Extracting the text, rather than keeping a copy,
# makes an edit of the README that breaks the example fail this test.
# Usage: readme_example.sh <source dir> <build dir> <scratch dir> [extra C flags]
# (the extra flags, e.g. the sanitizer build's, go right after `cc`).
set -eu
source_dir=$1
build=$2
scratch=$3
shift 3
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null

readme=$source_dir/README.md
marker='A standalone kernel test, `my_test.c`:'
awk -v marker="$marker" '
  index($0, marker) { found = 1; next }
  found && /^```c$/ { inside = 1; next }
  inside && /^```$/ { exit }
  inside { print }
' "$readme" >"$scratch/my_test.c"
command=$(awk -v marker="$marker" '
  index($0, marker) { found = 1 }
  found && /^    cc / { sub(/^    /, ""); print; exit }
' "$readme")
if [ ! -s "$scratch/my_test.c" ] || [ -z "$command" ]; then
  echo "readme_example: the example or its cc line is missing from $readme" >&2
  exit 1
fi
command=$(printf '%s\n' "$command" | sed "s|<prefix>|$scratch/prefix|g")
if [ $# -gt 0 ]; then command=$(printf '%s\n' "$command" | sed "s|^cc |cc $* |"); fi
echo "readme_example: $command"
output=$(cd "$scratch" && env -u LD_LIBRARY_PATH sh -c "$command" 2>&1) || {
  printf '%s\n' "$output"
  echo "readme_example: the README's command failed" >&2
  exit 1
}
printf '%s\n' "$output"
for expected in "out[1023] = 1023" '"total_us"'; do
  printf '%s\n' "$output" | grep -qF "$expected" || {
    echo "readme_example: \"$expected\" missing from the output" >&2
    exit 1
  }
done
echo "readme_example: the README's standalone kernel builds and runs as written"
