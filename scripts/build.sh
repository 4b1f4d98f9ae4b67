#!/usr/bin/env bash
# Installs the dependencies (idempotent) and builds tawa with the release preset.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)"
