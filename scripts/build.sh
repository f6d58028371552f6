#!/usr/bin/env bash
# Configures and builds jitcache into ./build (Release with debug info, warnings as errors).
# By default only what a user needs: the library, the `jitcache` tool and the example app
# (README's quick start), configured without the test suite, so that the packages of
# `scripts/install-deps.sh` (no --tests) are enough. `scripts/build.sh --all` configures and builds
# everything (scripts/test.sh runs it). BUILD_DIR picks another build folder; other arguments go
# to cmake's configure step. ccache is used when installed (faster rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
targets=(--target jitcache jitcache_tool opencl_example)
parts=(-DJITCACHE_BUILD_TESTS=OFF)
configure_args=()
for argument in "$@"; do
  if [ "$argument" = --all ]; then
    targets=() parts=(-DJITCACHE_BUILD_TESTS=ON)
  else
    configure_args+=("$argument")
  fi
done
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_WERROR=ON "${parts[@]}" "${launcher[@]}" \
  ${configure_args[@]+"${configure_args[@]}"}
cmake --build "$build_dir" -j"$(nproc)" ${targets[@]+"${targets[@]}"}
