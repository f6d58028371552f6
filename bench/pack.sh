#!/usr/bin/env bash
# Part 7: packs (docs/pack-format.md). bench/pack_bench, 10 000 entries: lookup latency (hits of an
# unsigned and of a signed pack, misses) for 4, 16 and 64 KiB binaries; at 16 KiB also building the
# pack vs copying the same bytes, from memory and along the `pack create` path from a real store
# (vs `cp -r` of that store + sync). One run each.
#   BENCH_PACK_ENTRIES=10000
# Writes docs/benchmarks/pack.csv and pack.md.
source "$(dirname "$0")/common.sh"
ensure_built pack_bench
entries=${BENCH_PACK_ENTRIES:-10000}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d)
csv=$results/pack.csv
echo "binary_bytes,metric,value,unit" > "$csv"
"$build/bench/pack_bench" "$work/4k" "$entries" 4096 lookups >> "$csv"
"$build/bench/pack_bench" "$work/16k" "$entries" 16384 >> "$csv"
"$build/bench/pack_bench" "$work/64k" "$entries" 65536 lookups >> "$csv"
rm -rf "$work"
value() { awk -F, -v b="$1" -v m="$2" '$1 == b && $2 == m { print $3 }' "$csv"; }
{
  echo "Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| binary size | pack | hit p50 / p99 (unsigned) | hit p50 / p99 (signed) | miss p50 / p99 | write_pack / copy of the same bytes, wall | CPU time |"
  echo "|---|---|---|---|---|---|---|"
  for b in 4096 16384 65536; do
    printf '| %s KiB | %.0f MB, index %.2f MB | %.1f / %.1f µs | %.1f / %.1f µs | %.2f / %.2f µs | %.2f s / %.2f s (mean of before %.2f, after %.2f) = %.2f × | %.2f s / %.2f s = %.2f × |\n' \
      $((b / 1024)) "$(value $b pack_size)" "$(value $b index_size)" "$(value $b hit_p50)" "$(value $b hit_p99)" \
      "$(value $b signed_hit_p50)" "$(value $b signed_hit_p99)" "$(value $b miss_p50)" "$(value $b miss_p99)" \
      "$(value $b write_pack)" "$(awk -v a="$(value $b copy_before)" -v c="$(value $b copy_after)" 'BEGIN { print (a + c) / 2 }')" \
      "$(value $b copy_before)" "$(value $b copy_after)" "$(value $b write_vs_copy)" \
      "$(value $b write_pack_cpu)" "$(value $b copy_cpu_mean)" "$(value $b write_vs_copy_cpu)"
  done
  echo
  printf 'The `pack create` path (list + checked load of %s entries of 16 KiB from a real store + write_pack) %.2f s; `cp -r` of that store + `sync` %.2f s: %.2f ×.\n' \
    "$entries" "$(value 16384 create_from_store)" "$(value 16384 cp_store)" "$(value 16384 create_vs_cp)"
} > "$results/pack.md"
cat "$results/pack.md"
