#!/usr/bin/env bash
# Copies the prebuilt files bench/gpu.sh needs into gpu-build/ (git-ignored), small enough to
# carry to a GPU machine that has no compilers: BUILD_DIR=gpu-build bench/gpu.sh runs there.
# The shim's shared libraries that another distribution may lack (hiredis) go into lib/.
source "$(dirname "$0")/common.sh"
ensure_built
rm -rf "$repo/gpu-build"
mkdir -p "$repo/gpu-build/shim" "$repo/gpu-build/bench" "$repo/gpu-build/lib"
strip --strip-debug -o "$repo/gpu-build/shim/libjitcache.so" "$shim"
strip --strip-debug -o "$repo/gpu-build/bench/build_timer" "$timer"
for lib in $(ldd "$shim" | awk '/hiredis|xxhash/ { print $3 }'); do cp -L "$lib" "$repo/gpu-build/lib/"; done
du -sh "$repo/gpu-build"
