#!/usr/bin/env bash
# The whole test suite: builds tawa, then runs every GoogleTest and lit test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --preset release -j "$(nproc)"
