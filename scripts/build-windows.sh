#!/usr/bin/env bash
# Cross-builds the Windows parts (jitcache.dll, jitcache-run.exe, the example apps) with
# MinGW-w64 into ./build-windows (BUILD_DIR picks another folder). Warnings are errors.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-windows}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64.cmake" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON "${launcher[@]}" "$@"
cmake --build "$build_dir" -j"${JOBS:-$(nproc)}"
