#!/usr/bin/env bash
# Copies the prebuilt files bench/gpu.sh and bench/scale.sh need into gpu-build/ (git-ignored),
# small enough to carry to a GPU machine that has no compilers: BUILD_DIR=gpu-build bench/gpu.sh
# (or bench/scale.sh, with LD_LIBRARY_PATH=gpu-build/lib) runs there.
# The shim's shared libraries that another distribution may lack (hiredis, which only its tiers'
# library libjitcache-tiers.so needs) go into lib/.
source "$(dirname "$0")/common.sh"
ensure_built
rm -rf "$repo/gpu-build"
mkdir -p "$repo/gpu-build/shim" "$repo/gpu-build/bench" "$repo/gpu-build/tools" "$repo/gpu-build/lib"
strip --strip-debug -o "$repo/gpu-build/shim/libjitcache.so" "$shim"
strip --strip-debug -o "$repo/gpu-build/shim/libjitcache-tiers.so" "$build/shim/libjitcache-tiers.so"
strip --strip-debug -o "$repo/gpu-build/bench/build_timer" "$timer"
strip --strip-debug -o "$repo/gpu-build/bench/store_scale" "$build/bench/store_scale"
strip --strip-debug -o "$repo/gpu-build/tools/jitcache" "$build/tools/jitcache"
for lib in $(ldd "$shim" "$build/shim/libjitcache-tiers.so" | awk '/hiredis|xxhash/ { print $3 }' | sort -u); do cp -L "$lib" "$repo/gpu-build/lib/"; done
du -sh "$repo/gpu-build"
