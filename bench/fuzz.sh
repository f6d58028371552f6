#!/usr/bin/env bash
# Runs every libFuzzer target for longer than CI does (default 300 s each), keeping what it finds
# in build-asan/tests/fuzz/parsers/found_<name>. Crashes are written to the current folder.
#   bench/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
[ -f build-asan/CMakeCache.txt ] || { echo "build first: scripts/sanitize.sh asan" >&2; exit 2; }
targets=$(cmake --build build-asan --target help | sed -n 's/^\.\.\. \(fuzz_[a-z_]*\).*/\1/p')
# shellcheck disable=SC2086
cmake --build build-asan -j"$(nproc)" --target $targets >/dev/null
export ASAN_OPTIONS=detect_odr_violation=0:verify_asan_link_order=0
export LSAN_OPTIONS=suppressions=$PWD/scripts/sanitizers/lsan.supp
for target in build-asan/tests/fuzz/parsers/fuzz_*; do
  [ -x "$target" ] || continue
  name=${target##*/fuzz_}
  echo "== $name: ${seconds}s"
  "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "build-asan/tests/fuzz/parsers/found_$name" "tests/fuzz/parsers/corpus/$name" 2>&1 | grep -E "^(stat::|==|INFO: Done|SUMMARY)" || true
done
