#!/usr/bin/env bash
# Configures and builds jitcache into ./build (Release with debug info, warnings as errors).
# By default only what a user needs: the library, the `jitcache` tool and the example app
# (README's quick start; scripts/test.sh builds the tests, benchmarks and the rest).
# `scripts/build.sh --all` builds everything. BUILD_DIR picks another build folder; other
# arguments go to cmake's configure step. ccache is used when installed (faster rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
targets=(--target jitcache jitcache_tool opencl_example)
configure_args=()
for argument in "$@"; do
  if [ "$argument" = --all ]; then targets=(); else configure_args+=("$argument"); fi
done
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON "${launcher[@]}" \
  ${configure_args[@]+"${configure_args[@]}"}
cmake --build "$build_dir" -j"$(nproc)" ${targets[@]+"${targets[@]}"}
