#!/usr/bin/env bash
# A build for bench/busy_fill.sh on the lent machine (no compilers there): the stripped shim and
# tool (tests/gpu/stage_jitcache.sh), the two apps it runs, and in lib/ the libraries of the tool
# that machine lacks (hiredis; see LIBS.txt).
# Usage: bench/stage_variant.sh BUILD_DIR DEST   e.g. build gpu-build/busy/new
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 dest=$2
tests/gpu/stage_jitcache.sh "$build" "$dest" >/dev/null
mkdir -p "$dest/apps" "$dest/lib"
strip --strip-debug -o "$dest/apps/opencl_example" "$build/examples/opencl/opencl_example"
strip --strip-debug -o "$dest/apps/opencl_release_early" "$build/tests/apps/opencl_release_early"
chmod 755 "$dest/apps/"*
for lib in $(ldd "$build/tools/jitcache" "$build/shim/libjitcache-tiers.so" | awk '/hiredis/ { print $3 }' | sort -u); do
  cp -L "$lib" "$dest/lib/"
done
du -sh "$dest"
