#!/bin/sh
# Quick start, main job: set up, build and install the SDK, build the
# custom-op libraries the way a user does (envsetup.sh), and run every
# registered op on the bm1684x and bm1688 cmodels, printing a table.
#
# Only what the job needs is compiled: scripts/build.sh makes a new build/
# for the SDK alone (libraries, tools, the installed package; no tests,
# benchmarks or Python front end), and envsetup.sh builds the sample ops.
# A build/ the tests made already is used as it is, rebuilding nothing.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/setup.sh"
sh "$root/scripts/build.sh"
# envsetup.sh is written for bash (and zsh); the rest of this script is sh.
bash -c '
  set -eu
  . "$1/envsetup.sh"
  rebuild_custom_lib_cmodel bm1684x
  rebuild_custom_firmware_cmodel bm1688
  tpu_op_check --chip bm1684x --chip bm1688
  echo
  echo "Gradients (register_custom_grad, docs/gradients.md): each declared gradient op on the emulator"
  echo "against central finite differences of its forward op'"'"'s reference:"
  tpu_op_check --grad --triage --chip bm1684x --chip bm1688
' demo "$root"
