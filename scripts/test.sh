#!/usr/bin/env bash
# README's test command: installs the test suite's packages (scripts/install-deps.sh --tests; asks
# apt nothing when they are all there), configures and builds everything (scripts/build.sh --all)
# and runs the whole suite through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests
scripts/build.sh --all
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
