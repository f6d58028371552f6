#!/usr/bin/env bash
# Part 4: BENCH_PROCS (16) processes start at once on an empty cache and build the same program.
# Reports the real compilations (the store's "misses" counter), entries stored, and the wall time
# of the whole group against one process alone on an empty cache (median of BENCH_REPS).
# Writes bench/results/many.csv and many.md.
source "$(dirname "$0")/common.sh"
ensure_built
export POCL_KERNEL_CACHE=0
procs=${BENCH_PROCS:-16}
reps=${BENCH_REPS:-3}
corpus=$(mktemp -d)
scratch=$(mktemp -d)
"$repo/bench/gen_corpus.sh" "$corpus" 10240
program=$corpus/k10240.cl
csv=$results/many.csv
echo "case,rep,wall_ms,compiles,stored_entries" > "$csv"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
counter() { sed -n "s/.*\"$2\": *\([0-9]*\).*/\1/p" "$1/stats.json" 2>/dev/null | head -1; }
entries() { find "$1" -name '*.entry' -path '*/??/??/*' | wc -l; }

# One group of $1 processes under the shim on a fresh cache.
group() {
  local count=$1 label=$2 rep=$3 dir start pids=()
  dir=$(fresh_cache_dir)
  start=$(now_ms)
  for _ in $(seq 1 "$count"); do
    # Its own PoCL scratch dir: PoCL 3.1 with its cache off shares one between processes that
    # load the same binary and deletes it under them (docs/concurrency.md).
    POCL_CACHE_DIR=$(mktemp -d -p "$scratch") JITCACHE_DIR=$dir LD_PRELOAD=$shim "$timer" --source "$program" >/dev/null &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  echo "$label,$rep,$(( $(now_ms) - start )),$(counter "$dir" misses),$(entries "$dir")" >> "$csv"
  rm -rf "$dir"
}

for rep in $(seq 1 "$reps"); do
  group 1 one "$rep"
  group "$procs" many "$rep"
done
# Reference: the same processes with no cache at all.
start=$(now_ms); pids=()
for _ in $(seq 1 "$procs"); do "$timer" --source "$program" >/dev/null & pids+=($!); done
for pid in "${pids[@]}"; do wait "$pid"; done
echo "many_uncached,1,$(( $(now_ms) - start )),$procs,0" >> "$csv"
rm -rf "$corpus" "$scratch"

col() { awk -F, -v c="$1" -v n="$2" '$1 == c { print $n }' "$csv" | median; }
one=$(col one 3); many=$(col many 3); uncached=$(col many_uncached 3)
{
  echo "| measure | value | target |"
  echo "|---|---:|---|"
  echo "| one process, empty cache (wall, median) | $one ms | |"
  echo "| $procs processes at once, empty cache (wall, median) | $many ms | |"
  echo "| ratio $procs processes / one | $(awk -v a="$many" -v b="$one" 'BEGIN { printf "%.2f", a / b }') × | ≤ 1.3 × |"
  echo "| real compiles in the group of $procs (median of \"misses\") | $(col many 4) | 1 per key (1 here) |"
  echo "| entries stored | $(col many 5) | 1 |"
  echo "| reference: $procs processes, no cache (wall) | $uncached ms | |"
} > "$results/many.md"
cat "$results/many.md"
