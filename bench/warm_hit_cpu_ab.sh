#!/usr/bin/env bash
# Warm 1 KiB disk hit of two libjitcache.so builds (A = before, B = after) against the floor, rep by
# rep interleaved, with each process's CPU time (perf stat task-clock, a software event: works in
# VMs without hardware counters) next to build_timer's timed window. Many cheap reps (default 151)
# so that a loaded machine still gives medians; docs/benchmarks.md Part 8 ("startup").
#   bench/warm_hit_cpu_ab.sh A/libjitcache.so B/libjitcache.so   (BENCH_REPS)
# Raw rows: bench/results/warm-hit-ab-startup-1k.csv (variant,window_us,task_clock_us).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
before=$(realpath "$1"); after=$(realpath "$2")
timer=$PWD/build/bench/build_timer
reps=${BENCH_REPS:-151}
work=$(mktemp -d /tmp/jitcache-warm-cpu-ab-XXXXXX)
trap 'rm -rf "$work"' EXIT
csv=${BENCH_CSV:-$results/warm-hit-ab-startup-1k.csv}
: > "$csv"
export POCL_KERNEL_CACHE=0
fresh() { POCL_CACHE_DIR=$(mktemp -d -p "$work/pocl") "$@"; }
mkdir -p "$work/pocl" && mkdir -m 700 "$work/cache"
bench/gen_corpus.sh "$work/corpus" 1024
source_file=$work/corpus/k1024.cl
fresh "$timer" --source "$source_file" --dump-binary "$work/k1024.bin" >/dev/null
fresh env JITCACHE_DIR="$work/cache" JITCACHE_CAPTURE=build LD_PRELOAD="$after" "$timer" --source "$source_file" >/dev/null
one() {  # variant, command...
  local variant=$1 window cpu; shift
  window=$(fresh perf stat -x, -e task-clock -o "$work/perf.txt" "$@" | head -1)
  cpu=$(awk -F, '/task-clock/ { printf "%d", $1 * 1000 }' "$work/perf.txt")
  echo "$variant,$window,$cpu" >> "$csv"
}
for _ in $(seq "$reps"); do
  one floor "$timer" --binary "$work/k1024.bin"
  one A env JITCACHE_DIR="$work/cache" LD_PRELOAD="$before" "$timer" --source "$source_file"
  one B env JITCACHE_DIR="$work/cache" LD_PRELOAD="$after" "$timer" --source "$source_file"
  rm -rf "${work:?}/pocl/"*
done
python3 - "$csv" <<'PY'
import collections, csv, statistics, sys
rows = collections.defaultdict(lambda: ([], []))
for variant, window, cpu in csv.reader(open(sys.argv[1])):
    rows[variant][0].append(int(window)); rows[variant][1].append(int(cpu))
median = lambda values: statistics.median(values)
floor = median(rows["floor"][0])
print("| variant | window median | window / floor | window fastest | process CPU median |")
print("|---|---:|---:|---:|---:|")
for variant in ("floor", "A", "B"):
    window, cpu = rows[variant]
    print(f"| {variant} | {median(window) / 1000:.2f} ms | {median(window) / floor:.2f} | {min(window) / 1000:.2f} ms | {median(cpu) / 1000:.2f} ms |")
PY
