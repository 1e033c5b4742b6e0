#!/bin/sh
# Quick start, main job: set up, build, and run the demo kernel on both chips.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
sh "$root/scripts/setup.sh"
sh "$root/scripts/build.sh"
"$root/build/cmodel_demo"
