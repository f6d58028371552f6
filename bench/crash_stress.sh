#!/usr/bin/env bash
# The crash test at length: kills store writers with SIGKILL at random points ITERATIONS times
# (default 5000), then checks that nothing a reader trusts is damaged, the size record matches the
# files and the sweep reclaims every leftover. Also runs the multi-process stress tests.
#   bench/crash_stress.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/tests/concurrency/concurrency_test ] || cmake --build build -j2 --target concurrency_test
JITCACHE_CRASH_ITERATIONS=${1:-5000} build/tests/concurrency/concurrency_test
