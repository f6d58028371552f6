#!/usr/bin/env bash
# The main job: the example app run twice under the cache, with a fresh cache dir. The first run
# compiles and stores, the second is served from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=$(mktemp -d /tmp/jitcache-demo-XXXXXX)
export JITCACHE_DIR="$cache" JITCACHE_TRACE=1 POCL_KERNEL_CACHE=0
run() {
  LD_PRELOAD="$PWD/build/shim/libjitcache.so" ./build/examples/opencl/opencl_example
}
echo "== run 1 (cold cache) =="; run
echo "== run 2 (warm cache) =="; run
echo "== verdicts recorded in $cache/traces (\"captured\": the capture helper's builds of run 1's misses) =="
grep -ho '"verdict": "[a-z]*"' "$cache"/traces/*.json | sort | uniq -c
