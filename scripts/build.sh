#!/usr/bin/env bash
# Configures and builds jitcache into ./build (Release with debug info, warnings as errors).
# BUILD_DIR picks another build folder; ccache is used when installed (faster rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON "${launcher[@]}" "$@"
cmake --build "$build_dir" -j"$(nproc)"
