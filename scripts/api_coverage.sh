#!/bin/sh
# Writes the API coverage table (docs/api-coverage.md) from the API list
# and the built library: a function counts as implemented when libcmodel.so
# defines it with a strong symbol; the weak ones are the "not implemented"
# stubs.
# Usage: api_coverage.sh <path to libcmodel.so> [output]
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/kernel/api/generate.py" coverage "$root/kernel/api/tpu_kernel.api" "$1" \
  "${2:-$root/docs/api-coverage.md}"
