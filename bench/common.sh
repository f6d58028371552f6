# Shared by the bench/*.sh scripts: paths, the build, medians, the machine description.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$repo/build}
results=${BENCH_RESULTS:-$repo/bench/results}  # every bench's data files (docs/decisions/measuring.md)
shim=$build/shim/libjitcache.so
timer=$build/bench/build_timer
mkdir -p "$results"

# Builds the drivers the benchmarks need unless BENCH_NO_BUILD=1 (a carried, prebuilt build).
ensure_built() {
  [ "${BENCH_NO_BUILD:-0}" = 1 ] && return
  [ -f "$build/CMakeCache.txt" ] || "$repo/scripts/build.sh" >/dev/null
  cmake --build "$build" -j2 --target jitcache build_timer store_scale "$@" >/dev/null
}

# A fresh private cache directory (the store refuses group/other-writable roots).
fresh_cache_dir() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/jitcache-bench.XXXXXX")
  chmod 700 "$dir"
  echo "$dir"
}

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The median of column 4 (microseconds) of CSV rows "group,variant,rep,us" for one group+variant.
median_of() { awk -F, -v g="$2" -v v="$3" '$1 == g && $2 == v { print $4 }' "$1" | median; }
