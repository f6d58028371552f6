#!/usr/bin/env bash
# Part 7: packs (docs/pack-format.md). bench/pack_bench, 10 000 entries carrying a real PoCL sidecar
# (bench/data/pocl_example_sidecar.json): lookup latency (hits of an unsigned XXH3-128 pack and of
# the same pack signed, SHA-256, alternating between the recorded answers kept as text, as the
# OpenCL adapter keeps them now, and decoded at the hit, as before; misses) and what each step of a hit costs alone, for 4, 16 and
# 64 KiB binaries; building the pack vs copying the same bytes at each size; at 16 KiB also the
# `pack create` path from a real store (vs `cp -r` of that store + sync). The sizes run in turn,
# and the whole round BENCH_PACK_RUNS times (default 2), so runs interleave on a shared machine.
# Each pack is timed twice: just after writing (first_read_*) and read before (hit_*: the target).
#   BENCH_PACK_ENTRIES=10000 BENCH_PACK_RUNS=2
# Writes bench/results/pack.csv (run,binary_bytes,metric,value,unit) and pack.md.
source "$(dirname "$0")/common.sh"
ensure_built pack_bench
entries=${BENCH_PACK_ENTRIES:-10000}
runs=${BENCH_PACK_RUNS:-2}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d)
csv=$results/pack.csv
echo "run,binary_bytes,metric,value,unit" > "$csv"
for run in $(seq "$runs"); do
  for bytes in 4096 16384 65536; do
    mode=lookups; [ "$bytes" = 16384 ] && mode=
    "$build/bench/pack_bench" "$work/$bytes" "$entries" "$bytes" $mode | sed "s/^/$run,/" >> "$csv"
  done
done
rm -rf "$work"
value() { awk -F, -v r="$1" -v b="$2" -v m="$3" '$1 == r && $2 == b && $3 == m { print $4 }' "$csv"; }
{
  echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')). Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "Hits alternate one by one between now (the answers kept as text, decoded when the app asks) and before (decoded at the hit): 5 000 of each per pack."
  echo
  echo "| binary size, run | hit p50 / p99 (unsigned, XXH3-128) | before: decoded at the hit | hit p50 / p99 (signed, SHA-256) | before: decoded at the hit | miss p50 / p99 | write_pack / copy of the same bytes, wall | CPU time |"
  echo "|---|---|---|---|---|---|---|---|"
  for b in 4096 16384 65536; do
    for run in $(seq "$runs"); do
      printf '| %s KiB, %s | %.1f / %.1f µs | %.1f / %.1f µs | %.1f / %.1f µs | %.1f / %.1f µs | %.2f / %.2f µs | %.2f s / %.2f s = %.2f × | %.2f s / %.2f s = %.2f × |\n' \
        $((b / 1024)) "$run" "$(value $run $b hit_p50)" "$(value $run $b hit_p99)" \
        "$(value $run $b eager_hit_p50)" "$(value $run $b eager_hit_p99)" \
        "$(value $run $b signed_hit_p50)" "$(value $run $b signed_hit_p99)" \
        "$(value $run $b eager_signed_hit_p50)" "$(value $run $b eager_signed_hit_p99)" "$(value $run $b miss_p50)" "$(value $run $b miss_p99)" \
        "$(value $run $b write_pack)" "$(awk -v a="$(value $run $b copy_before)" -v c="$(value $run $b copy_after)" 'BEGIN { print (a + c) / 2 }')" \
        "$(value $run $b write_vs_copy)" "$(value $run $b write_pack_cpu)" "$(value $run $b copy_cpu_mean)" "$(value $run $b write_vs_copy_cpu)"
    done
  done
  echo
  echo "The hits' distribution: p99.9 and max; the share of hits during which the thread was switched out (another process ran: \`getrusage\` RUSAGE_THREAD before and after each lookup, outside its timed span), the p50 / p99 of the other, undisturbed hits, and page faults per hit."
  echo
  echo "| binary size, run | unsigned p99.9 / max | unsigned: switched out, undisturbed p50 / p99, faults per hit | signed p99.9 / max | signed: switched out, undisturbed p50 / p99 | first read after writing, p50 / p99, unsigned / signed |"
  echo "|---|---|---|---|---|---|"
  for b in 4096 16384 65536; do
    for run in $(seq "$runs"); do
      printf '| %s KiB, %s | %.0f / %.0f µs | %.2f %%, %.1f / %.1f µs, %.2f | %.0f / %.0f µs | %.2f %%, %.1f / %.1f µs | %.1f / %.1f, %.1f / %.1f µs |\n' \
        $((b / 1024)) "$run" "$(value $run $b hit_p999)" "$(value $run $b hit_max)" \
        "$(value $run $b hit_switched_share)" "$(value $run $b hit_undisturbed_p50)" "$(value $run $b hit_undisturbed_p99)" "$(value $run $b hit_faults_per_hit)" \
        "$(value $run $b signed_hit_p999)" "$(value $run $b signed_hit_max)" \
        "$(value $run $b signed_hit_switched_share)" "$(value $run $b signed_hit_undisturbed_p50)" "$(value $run $b signed_hit_undisturbed_p99)" \
        "$(value $run $b first_read_hit_p50)" "$(value $run $b first_read_hit_p99)" \
        "$(value $run $b first_read_signed_hit_p50)" "$(value $run $b first_read_signed_hit_p99)"
    done
  done
  echo
  echo "Each step of a hit alone, run 1 (medians of 2000): the sidecar is $(value 1 4096 sidecar_bytes | cut -d. -f1) bytes."
  echo
  echo "| binary size | SHA-256 of the binary | XXH3-128 of the binary | XXH3-64 of the binary | SHA-256 / XXH3-128 of the sidecar | parse of the sidecar's hit fields, answers as text | decode of the answers (RapidJSON) | before: hit fields with the answers' nlohmann tree | the answers' nlohmann tree alone |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for b in 4096 16384 65536; do
    printf '| %s KiB | %.1f µs | %.2f µs | %.2f µs | %.2f / %.2f µs | %.1f µs | %.1f µs | %.1f µs | %.1f µs |\n' $((b / 1024)) \
      "$(value 1 $b sha256_binary_p50)" "$(value 1 $b xxh3_128_binary_p50)" "$(value 1 $b xxh3_64_binary_p50)" \
      "$(value 1 $b sha256_sidecar_p50)" "$(value 1 $b xxh3_128_sidecar_p50)" "$(value 1 $b parse_sidecar_p50)" \
      "$(value 1 $b decode_answers_p50)" "$(value 1 $b parse_sidecar_with_answers_p50)" "$(value 1 $b answers_tree_p50)"
  done
  echo
  for run in $(seq "$runs"); do
    printf 'Run %s: the `pack create` path (list + checked load of %s entries of 16 KiB from a real store + write_pack) %.2f s; `cp -r` of that store + `sync` %.2f s: %.2f ×.\n' \
      "$run" "$entries" "$(value $run 16384 create_from_store)" "$(value $run 16384 cp_store)" "$(value $run 16384 create_vs_cp)"
  done
  echo
  for run in $(seq "$runs"); do
    printf 'Run %s: a disk store hit of the same 16 KiB entries (3000, the three alternating): sidecar parsed whole p50 / p99 %.1f / %.1f µs; hit fields + answers decoded (before) %.1f / %.1f µs; hit fields, answers kept as text (now) %.1f / %.1f µs.\n' \
      "$run" "$(value $run 16384 disk_hit_whole_p50)" "$(value $run 16384 disk_hit_whole_p99)" \
      "$(value $run 16384 disk_hit_fields_decoded_p50)" "$(value $run 16384 disk_hit_fields_decoded_p99)" \
      "$(value $run 16384 disk_hit_fields_lazy_p50)" "$(value $run 16384 disk_hit_fields_lazy_p99)"
  done
} > "$results/pack.md"
cat "$results/pack.md"
