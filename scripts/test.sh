#!/usr/bin/env bash
# Builds (if needed) and runs the whole test suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/CMakeCache.txt ] || scripts/build.sh
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
