#!/usr/bin/env bash
# Part 5: a store with many synthetic entries, through the DiskStore API: store throughput, lookup
# p50/p99, size()/list()/list_summaries() (the index), the `jitcache stats` / `jitcache ls`
# (whole, and `| head`) commands when the tool is built, the automatic pass one save over the limit
# runs, and one `evict` pass down to half the store.
#   BENCH_ENTRIES=100000  BENCH_ENTRY_BYTES=4096
#   BENCH_SKIP_EVICT=1: no evict / rm (at a million they take an hour on a loaded VM)
#   BENCH_SKIP_FULL_LIST=1: no DiskStore::list() (every sidecar read; minutes at a million)
# Writes bench/results/scale.csv and scale.md.
source "$(dirname "$0")/common.sh"
ensure_built
entries=${BENCH_ENTRIES:-100000}
bytes=${BENCH_ENTRY_BYTES:-4096}
dir=$(fresh_cache_dir)
csv=$results/scale.csv
echo "metric,value,unit" > "$csv"
"$build/bench/store_scale" fill "$dir" "$entries" "$bytes" >> "$csv"

# The command line tool, once it exists: time its stats and ls over the same store.
tool=$build/tools/jitcache
if [ -x "$tool" ]; then
  for command in stats ls; do
    start=$(date +%s%N)
    JITCACHE_DIR=$dir "$tool" "$command" >/dev/null
    echo "cli_$command,$(( ($(date +%s%N) - start) / 1000000 )),ms" >> "$csv"
  done
  start=$(date +%s%N)
  (set +o pipefail; JITCACHE_DIR=$dir "$tool" ls | head -5 >/dev/null)  # ls ends on SIGPIPE
  echo "cli_ls_head,$(( ($(date +%s%N) - start) / 1000000 )),ms" >> "$csv"
  start=$(date +%s%N)
  JITCACHE_DIR=$dir "$tool" ls --sort used >/dev/null
  echo "cli_ls_used,$(( ($(date +%s%N) - start) / 1000000 )),ms" >> "$csv"
fi
sync  # the fill's writes are flushed before either removal is timed
"$build/bench/store_scale" autopass "$dir" >> "$csv"
if [ -z "${BENCH_SKIP_EVICT:-}" ]; then
  "$build/bench/store_scale" evict "$dir" >> "$csv"
  # The disk's own floor for the same work: rm deletes the remaining half (as many files as the
  # eviction removed), so the pass can be judged against what this disk allows.
  sync
  start=$(date +%s%N)
  find "$dir" -path '*/??/??/*' -name '*.entry' -print0 | xargs -0 rm -f
  echo "rm_floor,$(awk -v ns="$(( $(date +%s%N) - start ))" 'BEGIN { printf "%.3f", ns / 1e9 }'),s" >> "$csv"
fi
rm -rf "$dir"

value() { awk -F, -v m="$1" '$1 == m { print $2 }' "$csv"; }
{
  echo "| measure ($entries entries of $bytes B) | value | target |"
  echo "|---|---:|---|"
  echo "| store throughput | $(value store_throughput | cut -d. -f1) entries/s | |"
  echo "| lookup p50 | $(value lookup_p50) µs | |"
  echo "| lookup p99 | $(value lookup_p99) µs | ≤ 100 µs |"
  echo "| DiskStore::size() | $(value size_call) µs | |"
  [ -n "$(value list_call)" ] && echo "| DiskStore::list() (every sidecar read) | $(value list_call) ms | |"
  echo "| DiskStore::list_summaries(), writing the index | $(value list_index_build) ms | |"
  echo "| DiskStore::list_summaries(), index current | $(value list_index) ms | |"
  if [ -x "$tool" ]; then
    echo "| \`jitcache stats\` | $(value cli_stats) ms | |"
    echo "| \`jitcache ls\` | $(value cli_ls) ms | ≤ 1 s |"
    echo "| \`jitcache ls \| head\` | $(value cli_ls_head) ms | ≤ 100 ms |"
    echo "| \`jitcache ls --sort used\` | $(value cli_ls_used) ms | |"
  else
    echo "| \`jitcache stats\` / \`ls\` | not measured: the tool was not built yet | |"
  fi
  echo "| automatic pass of one save over the limit, median / slowest of 5 ($(value auto_pass_evicted | cut -d. -f1) entries removed; CPU $(value auto_pass_cpu) ms) | $(value auto_pass) / $(value auto_pass_max) ms | ≤ 50 ms |"
  if [ -z "${BENCH_SKIP_EVICT:-}" ]; then
    echo "| \`evict\` pass (to half: $(value evicted_entries | cut -d. -f1) entries removed) | $(value eviction_pass) s | |"
    echo "| the disk's floor: \`rm\` of the other half's files | $(value rm_floor) s | |"
    echo "| eviction pass / rm floor | $(awk -v a="$(value eviction_pass)" -v b="$(value rm_floor)" 'BEGIN { printf "%.2f", a / b }') × | ≤ 1.2 × |"
  fi
} > "$results/scale.md"
cat "$results/scale.md"
