#!/usr/bin/env bash
# Warm disk hit of two libjitcache.so builds (A = before a change, B = after) against the floor
# (clCreateProgramWithBinary + clBuildProgram of the same binary, no jitcache), rep by rep
# interleaved, on PoCL with its cache off; medians per source size. Used for issue 16's
# "warm hit <= 1.10 x floor" (docs/benchmarks.md, Part 8). The miss of each build too (A_miss,
# B_miss: an empty cache, the binary read and stored in the app, capture = build) against the
# build without jitcache (plain): a change to the miss path shows there.
#   bench/warm_hit_ab.sh A/libjitcache.so B/libjitcache.so   (BENCH_REPS, default 9; BENCH_TIMER:
#   the build_timer to use, default build/bench/build_timer)
# Raw numbers: bench/results/warm-hit-ab.csv (size,variant,microseconds).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
before=$(realpath "$1"); after=$(realpath "$2")
timer=$(realpath "${BENCH_TIMER:-$PWD/build/bench/build_timer}")
reps=${BENCH_REPS:-9}
work=$(mktemp -d /tmp/jitcache-warm-ab-XXXXXX)
trap 'rm -rf "$work"' EXIT
csv=${BENCH_CSV:-$results/warm-hit-ab.csv}
: > "$csv"
export POCL_KERNEL_CACHE=0
fresh() { POCL_CACHE_DIR=$(mktemp -d -p "$work") env "$@"; }
bench/gen_corpus.sh "$work/corpus" 1024 10240 102400
for size in 1024 10240 102400; do
  source_file=$work/corpus/k$size.cl
  fresh "$timer" --source "$source_file" --dump-binary "$work/k$size.bin" >/dev/null
  # One cache, filled by B with the binary read in the app (no helper to wait for): both read it.
  fresh JITCACHE_DIR="$work/cache$size" JITCACHE_CAPTURE=build LD_PRELOAD="$after" "$timer" --source "$source_file" >/dev/null
  for _ in $(seq "$reps"); do
    echo "$size,floor,$(fresh "$timer" --binary "$work/k$size.bin" | head -1)" >> "$csv"
    echo "$size,A,$(fresh JITCACHE_DIR="$work/cache$size" LD_PRELOAD="$before" "$timer" --source "$source_file" | head -1)" >> "$csv"
    echo "$size,B,$(fresh JITCACHE_DIR="$work/cache$size" LD_PRELOAD="$after" "$timer" --source "$source_file" | head -1)" >> "$csv"
    echo "$size,plain,$(fresh "$timer" --source "$source_file" | head -1)" >> "$csv"
    for variant in A B; do
      library=$before; [ "$variant" = B ] && library=$after
      echo "$size,${variant}_miss,$(fresh JITCACHE_DIR="$(mktemp -d -p "$work")" JITCACHE_CAPTURE=build LD_PRELOAD="$library" \
        "$timer" --source "$source_file" | head -1)" >> "$csv"
    done
  done
done
python3 - "$csv" <<'PY'
import collections, csv, statistics, sys
runs = collections.defaultdict(list)
for size, variant, us in csv.reader(open(sys.argv[1])): runs[(int(size), variant)].append(int(us))
print("| source size | floor | A (before) | A / floor | B (after) | B / floor |"
      " plain build | A miss | A miss / plain | B miss | B miss / plain |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for size in (1024, 10240, 102400):
    f, a, b, p, am, bm = (statistics.median(runs[(size, v)]) for v in ("floor", "A", "B", "plain", "A_miss", "B_miss"))
    print(f"| {size // 1024} KiB | {f / 1000:.2f} ms | {a / 1000:.2f} ms | {a / f:.2f} | {b / 1000:.2f} ms | {b / f:.2f} |"
          f" {p / 1000:.2f} ms | {am / 1000:.2f} ms | {am / p:.2f} | {bm / 1000:.2f} ms | {bm / p:.2f} |")
PY
