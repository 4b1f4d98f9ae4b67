#!/usr/bin/env bash
# The whole test suite: builds tawa and its Python package, then runs every GoogleTest, lit and
# pytest test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
./scripts/python-package.sh
ctest --preset release -j "$(nproc)"
