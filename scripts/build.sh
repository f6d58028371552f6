#!/usr/bin/env bash
# Configures and builds jitcache into ./build (Release with debug info, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON
cmake --build build -j"$(nproc)"
