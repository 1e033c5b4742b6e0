#!/bin/sh
# Installs the Debian packages the SDK needs (as root, or through sudo):
#   sh scripts/setup.sh [--tests | --tests-only] [package...]
# With --tests, also the packages only the test suite needs; building and
# using the SDK never needs them. --tests-only installs those alone
# (scripts/test.sh runs it beside the build: a download overlaps the
# compile). Packages named after it are installed too (CI adds clang for the
# fuzz targets).
# Says in one line which packages it installs, or that none is missing;
# apt-get's own output goes to a log file, printed only when it fails.
set -eu
packages="build-essential cmake pkg-config libfmt-dev nlohmann-json3-dev zlib1g-dev libdw-dev
libgtest-dev libgmock-dev libbenchmark-dev libminizip-dev libcli11-dev libssl-dev ninja-build python3
python3-dev python3-numpy pybind11-dev libflatbuffers-dev flatbuffers-compiler binutils-aarch64-linux-gnu
binutils-riscv64-linux-gnu libopenblas-dev ccache libonnx-dev"
# ---- test-only packages -------------------------------------------------------
# chromium: the CTest test report_in_browser renders tpu_op_check --report's
# page headless and checks the screenshot and the DOM.
# python3-torch: the PyTorch autograd tests of tpu_sdk.autograd (gradcheck of
# the sample gradients, the training loop; docs/gradients.md). A large
# package (about 1 GB installed with its dependencies).
# python3-onnx, libonnx-testdata: the ONNX importer's tests (hand-made graphs,
# PyTorch exports) and its conformance run over ONNX's own node tests
# (tests/onnx/onnx_conformance.py; docs/onnx.md).
test_packages="chromium python3-torch python3-onnx libonnx-testdata"
case "${1:-}" in
  --tests) packages="$packages $test_packages"; shift ;;
  --tests-only) packages="$test_packages"; shift ;;
esac
packages="$packages $*"
missing=""
count=0
for p in $packages; do
  count=$((count + 1))
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "setup: the $count Debian packages needed are installed"
  exit 0
fi
run_as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
log=$(mktemp "${TMPDIR:-/tmp}/tpu-sdk-setup.XXXXXX")
echo "setup: installing$missing (apt-get; log: $log)"
# apt-get's progress would bury the one line that matters; on failure the
# log's end says what went wrong (a package name, the network, a lock).
failed() {
  tail -n 30 "$log" >&2
  echo "setup: apt-get $1 failed (full log: $log)" >&2
  exit 1
}
run_as_root apt-get update -q >"$log" 2>&1 || failed update
# shellcheck disable=SC2086
run_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing \
  >>"$log" 2>&1 || failed install
echo "setup: installed$missing"
rm -f "$log"
