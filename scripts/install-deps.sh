#!/usr/bin/env bash
# Installs tawa's build and test dependencies from Debian's packages. Idempotent: packages already
# present are left alone, and apt-get update runs only when something is missing.
set -euo pipefail
pkgs=(cmake ninja-build g++ ccache pkg-config
      libeigen3-dev libtbb-dev libfmt-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev
      libgtest-dev libgmock-dev libbenchmark-dev llvm-14-tools python3
      clang-14 sqlite3 python3-optuna)  # tawa tune: clang++ -O1 -emit-llvm features; the record's shell; TPE in scripts/tune-eval.py
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#pkgs[@]} packages present"
fi
