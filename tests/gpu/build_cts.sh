#!/usr/bin/env bash
# Build the Khronos OpenCL-CTS test_api and test_compiler and lay out a carry folder
# (default gpu-build/cts) that tests/gpu/run_cts.sh runs on a machine without compilers.
#
# Usage: tests/gpu/build_cts.sh [CTS_SRC [CL_HEADERS [SPIRV_HEADERS]]]
# Environment (all optional):
#   CTS_SRC        OpenCL-CTS source tree     (default gpu-build/src/OpenCL-CTS)
#   CL_HEADERS     OpenCL-Headers source tree (default gpu-build/src/OpenCL-Headers)
#   SPIRV_HEADERS  SPIRV-Headers source tree  (default gpu-build/src/SPIRV-Headers)
#   CTS_BUILD      build folder               (default gpu-build/cts-build)
#   CTS_CARRY      carry folder to (re)create (default gpu-build/cts)
#   CL_LIB_DIR     folder holding libOpenCL.so (default: found through the compiler)
#   JOBS           make -j value              (default 2)
#   CTS_STATIC_CXX 0 (default): link libstdc++/libgcc_s dynamically: the binaries then need what the
#                  jitcache library built here needs anyway (glibc 2.34, GLIBCXX_3.4.30);
#                  1: link them statically (no libstdc++ needed there, but glibc 2.36: arc4random).
#
# Needs: cmake, g++, python3, spirv-tools (spirv-as, spirv-val), ocl-icd-opencl-dev.
# The sources are never modified: the CTS tree is copied into the build folder and patched there
# (drops add_subdirectory(spir) when test_conformance/spir/*.zip files are missing).
#
# Note: this script builds third-party code fetched for the GPU check; keep it and its outputs out
# of commits (gpu-build/ is git-ignored).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CTS_SRC=${1:-${CTS_SRC:-$ROOT/gpu-build/src/OpenCL-CTS}}
CL_HEADERS=${2:-${CL_HEADERS:-$ROOT/gpu-build/src/OpenCL-Headers}}
SPIRV_HEADERS=${3:-${SPIRV_HEADERS:-$ROOT/gpu-build/src/SPIRV-Headers}}
CTS_BUILD=${CTS_BUILD:-$ROOT/gpu-build/cts-build}
CTS_CARRY=${CTS_CARRY:-$ROOT/gpu-build/cts}
JOBS=${JOBS:-2}
CTS_STATIC_CXX=${CTS_STATIC_CXX:-0}

log() { printf '[build_cts] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

for d in "$CTS_SRC" "$CL_HEADERS" "$SPIRV_HEADERS"; do
    [ -d "$d" ] || die "missing source folder $d"
done
[ -f "$CTS_SRC/test_conformance/CMakeLists.txt" ] || die "$CTS_SRC is not an OpenCL-CTS tree"
[ -f "$CL_HEADERS/CL/cl.h" ] || die "$CL_HEADERS has no CL/cl.h"
[ -d "$SPIRV_HEADERS/include" ] || die "$SPIRV_HEADERS has no include/"
for t in cmake make g++ python3 spirv-as spirv-val strip; do
    command -v "$t" >/dev/null || die "$t not found (apt-get install cmake g++ python3 spirv-tools binutils)"
done
CTS_SRC=$(cd "$CTS_SRC" && pwd)
CL_HEADERS=$(cd "$CL_HEADERS" && pwd)
SPIRV_HEADERS=$(cd "$SPIRV_HEADERS" && pwd)

if [ -z "${CL_LIB_DIR:-}" ]; then
    lib=$(g++ -print-file-name=libOpenCL.so)
    [ "$lib" != libOpenCL.so ] || die "libOpenCL.so not found (apt-get install ocl-icd-opencl-dev) or set CL_LIB_DIR"
    CL_LIB_DIR=$(dirname "$(readlink -f "$lib")")
fi
[ -e "$CL_LIB_DIR/libOpenCL.so" ] || die "no libOpenCL.so in $CL_LIB_DIR"

# --- patched copy of the CTS sources -------------------------------------------------------------
mkdir -p "$CTS_BUILD"
SRC_COPY=$CTS_BUILD/src
log "copying $CTS_SRC to $SRC_COPY"
rm -rf "$SRC_COPY.tmp"
mkdir -p "$SRC_COPY.tmp"
# Everything but the .git folder and the spir zips (large, and not needed by test_api/test_compiler).
(cd "$CTS_SRC" && tar --exclude=./.git --exclude='./test_conformance/spir/*.zip' -cf - .) |
    (cd "$SRC_COPY.tmp" && tar -xf -)
# Use the zips from the source only if all of them are there; otherwise drop the spir folder.
missing_zip=0
if [ -f "$CTS_SRC/test_conformance/spir/CMakeLists.txt" ]; then
    for z in $(sed -n 's/^[[:space:]]*"\([A-Za-z0-9_]*\.zip\)".*/\1/p' "$CTS_SRC/test_conformance/spir/CMakeLists.txt"); do
        [ -s "$CTS_SRC/test_conformance/spir/$z" ] || { missing_zip=1; log "missing spir zip: $z"; }
    done
fi
if [ "$missing_zip" = 1 ] || [ "${CTS_DROP_SPIR:-1}" = 1 ]; then
    # Only test_api and test_compiler are built: the spir module is never needed.
    log "dropping add_subdirectory(spir) from the copy of test_conformance/CMakeLists.txt"
    sed -i -E '/^[[:space:]]*add_subdirectory[[:space:]]*\([[:space:]]*spir[[:space:]]*\)/d' \
        "$SRC_COPY.tmp/test_conformance/CMakeLists.txt"
    grep -qE 'add_subdirectory[[:space:]]*\([[:space:]]*spir[[:space:]]*\)' \
        "$SRC_COPY.tmp/test_conformance/CMakeLists.txt" && die "could not drop add_subdirectory(spir)"
else
    cp "$CTS_SRC"/test_conformance/spir/*.zip "$SRC_COPY.tmp/test_conformance/spir/"
fi
# Keep the old copy when nothing changed, so that a rebuild is incremental.
if [ -d "$SRC_COPY" ] && diff -rq "$SRC_COPY" "$SRC_COPY.tmp" >/dev/null 2>&1; then
    rm -rf "$SRC_COPY.tmp"
else
    rm -rf "$SRC_COPY"
    mv "$SRC_COPY.tmp" "$SRC_COPY"
fi

# --- configure and build ---------------------------------------------------------------------------
BIN=$CTS_BUILD/build
ldflags=""
[ "$CTS_STATIC_CXX" = 1 ] && ldflags="-static-libstdc++ -static-libgcc"
log "configuring in $BIN"
cmake -S "$SRC_COPY" -B "$BIN" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCL_INCLUDE_DIR="$CL_HEADERS" \
    -DCL_LIB_DIR="$CL_LIB_DIR" \
    -DOPENCL_LIBRARIES=OpenCL \
    -DSPIRV_INCLUDE_DIR="$SPIRV_HEADERS" \
    -DSPIRV_TOOLS_DIR="$(dirname "$(command -v spirv-as)")" \
    -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_COMPILE_WARNING_AS_ERROR=OFF \
    --compile-no-warning-as-error >"$CTS_BUILD/configure.log" 2>&1 ||
    { tail -40 "$CTS_BUILD/configure.log" >&2; die "cmake configure failed (log: $CTS_BUILD/configure.log)"; }
log "building test_api test_compiler with make -j$JOBS (about 10 minutes on 2 cores)"
make -C "$BIN" -j"$JOBS" test_api test_compiler >"$CTS_BUILD/build.log" 2>&1 ||
    { tail -40 "$CTS_BUILD/build.log" >&2; die "build failed (log: $CTS_BUILD/build.log)"; }

API_DIR=$BIN/test_conformance/api
COMP_DIR=$BIN/test_conformance/compiler
[ -x "$API_DIR/test_api" ] || die "no $API_DIR/test_api"
[ -x "$COMP_DIR/test_compiler" ] || die "no $COMP_DIR/test_compiler"
[ -d "$COMP_DIR/spirv_bin" ] || die "no $COMP_DIR/spirv_bin (spirv-as failed?)"

# --- carry folder ------------------------------------------------------------------------------------
log "laying out $CTS_CARRY"
rm -rf "$CTS_CARRY"
mkdir -p "$CTS_CARRY/lib"
strip -o "$CTS_CARRY/test_api" "$API_DIR/test_api"
strip -o "$CTS_CARRY/test_compiler" "$COMP_DIR/test_compiler"
chmod 755 "$CTS_CARRY/test_api" "$CTS_CARRY/test_compiler"
# test_compiler resolves these relative to its own folder (includeTestDirectory) or the current one.
cp -r "$COMP_DIR/includeTestDirectory" "$COMP_DIR/secondIncludeTestDirectory" "$COMP_DIR/spirv_bin" "$CTS_CARRY/"
[ -f "$COMP_DIR/spirv_asm_list.txt" ] && cp "$COMP_DIR/spirv_asm_list.txt" "$CTS_CARRY/"
# Anything else the compiler tests keep beside the binary (data files added by newer CTS versions).
for f in "$COMP_DIR"/*; do
    b=$(basename "$f")
    case "$b" in
        test_compiler|CMakeFiles|Makefile|cmake_install.cmake|CTestTestfile.cmake|*.cmake) continue ;;
    esac
    [ -e "$CTS_CARRY/$b" ] || { cp -r "$f" "$CTS_CARRY/"; log "also carried: $b"; }
done

# The platform check run_cts.sh makes before the tests (our own small program).
command -v gcc >/dev/null || die "gcc not found"
gcc -O2 -std=c99 -Wall -I"$CL_HEADERS" -o "$CTS_CARRY/cl_platforms" "$ROOT/tests/gpu/cl_platforms.c" \
    -L"$CL_LIB_DIR" -lOpenCL
strip "$CTS_CARRY/cl_platforms"

# A fallback ICD loader, used by run_cts.sh only when the target machine has no libOpenCL.so.1
# (ocl-icd, which understands OCL_ICD_FILENAMES / OCL_ICD_VENDORS / OPENCL_LAYERS).
cp -L "$CL_LIB_DIR/libOpenCL.so.1" "$CTS_CARRY/lib/libOpenCL.so.1"

# Record what was built.
{
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m) $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "compiler: $(g++ --version | head -1)"
    for d in "$CTS_SRC" "$CL_HEADERS" "$SPIRV_HEADERS"; do
        rev=$(git -C "$d" rev-parse HEAD 2>/dev/null || echo unknown)
        [ -f "$d/.source-rev" ] && rev=$(cat "$d/.source-rev")
        echo "source: $(basename "$d") $rev"
    done
    echo "static libstdc++: $CTS_STATIC_CXX"
    echo "spir module dropped: $missing_zip (missing zips) / CTS_DROP_SPIR=${CTS_DROP_SPIR:-1}"
} >"$CTS_CARRY/BUILD-INFO.txt"

# --- checks --------------------------------------------------------------------------------------------
bad=0
for b in test_api test_compiler cl_platforms; do
    log "ldd $b:"
    ldd "$CTS_CARRY/$b" | sed 's/^/    /' >&2
    # Only the ICD loader and glibc's own libraries (plus the vdso/loader) are allowed.
    extra=$(ldd "$CTS_CARRY/$b" | awk '{print $1}' |
        grep -vE '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|libOpenCL\.so\.1|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$' || true)
    if [ -n "$extra" ]; then
        log "unexpected shared libraries for $b: $extra"
        bad=1
    fi
    glibc=$(objdump -T "$CTS_CARRY/$b" 2>/dev/null | grep -oE 'GLIBC_[0-9.]+' | sort -uV | tail -1 || true)
    glibcxx=$(objdump -T "$CTS_CARRY/$b" 2>/dev/null | grep -oE 'GLIBCXX_[0-9.]+' | sort -uV | tail -1 || true)
    log "$b needs at most $glibc ${glibcxx}"
    echo "$b: needs ${glibc:-?} ${glibcxx}; libs: $(ldd "$CTS_CARRY/$b" | awk '{print $1}' | tr '\n' ' ')" >>"$CTS_CARRY/BUILD-INFO.txt"
done
[ "$bad" = 0 ] || die "the binaries need libraries beyond libOpenCL.so.1 and glibc"

log "carry folder $CTS_CARRY: $(du -sh "$CTS_CARRY" | cut -f1)"
echo "$CTS_CARRY"
