#!/usr/bin/env bash
# Stripped copies of the jitcache build for a machine without compilers: the RelWithDebInfo
# libraries and tool are ~20 MB each, too much for a 64 MiB carry. Keeps the build tree's layout
# (shim/ beside tools/) so that libjitcache.so still finds its capture helper (../tools/jitcache)
# and libjitcache-tiers.so beside it.
#
# Usage: tests/gpu/stage_jitcache.sh [BUILD_DIR [DEST]]   (default build, gpu-build/jitcache)
# Then:  JITCACHE_LIB=gpu-build/jitcache/shim/libjitcache.so tests/gpu/run_cts.sh
#        (run_cts.sh uses that path by itself when build/shim/libjitcache.so is absent)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
DEST=${2:-$ROOT/gpu-build/jitcache}

[ -f "$BUILD/shim/libjitcache.so" ] || { echo "no $BUILD/shim/libjitcache.so (build jitcache first)" >&2; exit 1; }
rm -rf "$DEST"
mkdir -p "$DEST/shim" "$DEST/tools"
strip --strip-debug -o "$DEST/shim/libjitcache.so" "$BUILD/shim/libjitcache.so"
if [ -f "$BUILD/shim/libjitcache-tiers.so" ]; then
    strip --strip-debug -o "$DEST/shim/libjitcache-tiers.so" "$BUILD/shim/libjitcache-tiers.so"
else
    echo "note: no $BUILD/shim/libjitcache-tiers.so (apps then run without packs and the remote tier)" >&2
fi
if [ -x "$BUILD/tools/jitcache" ]; then
    strip --strip-debug -o "$DEST/tools/jitcache" "$BUILD/tools/jitcache"
    chmod 755 "$DEST/tools/jitcache"
else
    echo "note: no $BUILD/tools/jitcache (no capture helper, no 'jitcache wait')" >&2
fi
for f in "$DEST"/shim/*.so "$DEST"/tools/*; do
    [ -e "$f" ] || continue
    if ldd "$f" | grep -q 'not found'; then
        echo "warning: $f needs libraries missing here:" >&2
        ldd "$f" | grep 'not found' >&2
    fi
    echo "$(basename "$f"): $(ldd "$f" | awk '$1 !~ /^(linux-vdso|\/lib64)/ {print $1}' | tr '\n' ' ')"
done >"$DEST/LIBS.txt"
cat "$DEST/LIBS.txt" >&2
echo "staged in $DEST: $(du -sh "$DEST" | cut -f1)" >&2
echo "$DEST"
