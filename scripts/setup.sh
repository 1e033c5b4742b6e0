#!/bin/sh
# Installs the Debian packages the SDK needs (as root, or through sudo).
# With --tests, also the packages only the test suite needs (scripts/test.sh
# passes it); building and using the SDK never needs them.
set -eu
packages="build-essential cmake pkg-config libfmt-dev nlohmann-json3-dev zlib1g-dev libdw-dev
libgtest-dev libgmock-dev libbenchmark-dev libminizip-dev libcli11-dev libssl-dev ninja-build python3
python3-dev python3-numpy pybind11-dev libflatbuffers-dev flatbuffers-compiler binutils-aarch64-linux-gnu
binutils-riscv64-linux-gnu libopenblas-dev"
# ---- test-only packages -------------------------------------------------------
# chromium: the CTest test report_in_browser renders tpu_op_check --report's
# page headless and checks the screenshot and the DOM.
test_packages="chromium"
if [ "${1:-}" = "--tests" ]; then
  packages="$packages $test_packages"
fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
run_as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
echo "installing:$missing"
run_as_root apt-get update -q
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive run_as_root apt-get install -y -q --no-install-recommends $missing
