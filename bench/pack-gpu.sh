#!/usr/bin/env bash
# Copies the two prebuilt files bench/gpu.sh needs into gpu-build/ (git-ignored), small enough to
# carry to a GPU machine that has no compilers: BUILD_DIR=gpu-build bench/gpu.sh runs there.
source "$(dirname "$0")/common.sh"
ensure_built
rm -rf "$repo/gpu-build"
mkdir -p "$repo/gpu-build/shim" "$repo/gpu-build/bench"
cp "$shim" "$repo/gpu-build/shim/"
cp "$timer" "$repo/gpu-build/bench/"
