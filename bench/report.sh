#!/usr/bin/env bash
# Assembles docs/benchmarks.md from the results the part scripts left in docs/benchmarks/: the
# machine, date and commit, every target with its measured number, then each part's table.
# Parts that have not been run (no CSV) are listed as such.
source "$(dirname "$0")/common.sh"
doc=$repo/docs/benchmarks.md
r=$results

ratio_max() {  # CSV, numerator variant, denominator variant: the worst per-group ratio of medians
  local csv=$1 groups
  groups=$(awk -F, 'NR > 1 { print $1 }' "$csv" | sort -u)
  for g in $groups; do
    awk -v a="$(median_of "$csv" "$g" "$2")" -v b="$(median_of "$csv" "$g" "$3")" 'BEGIN { print a / b }'
  done | sort -g | tail -1
}
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? v <= t : v >= t; print ok ? "met" : "**missed**" }'; }

targets() {
  echo "| target | measured | verdict |"
  echo "|---|---|---|"
  if [ -f "$r/micro.csv" ]; then
    local warm over over_release mem
    warm=$(ratio_max "$r/micro.csv" warm_disk floor)
    over=$(awk -v x="$(ratio_max "$r/micro.csv" cold_shim cold)" 'BEGIN { printf "%.1f", (x - 1) * 100 }')
    over_release=$(awk -v x="$(ratio_max "$r/micro.csv" cold_release cold)" 'BEGIN { printf "%.1f", (x - 1) * 100 }')
    mem=$(for g in $(awk -F, 'NR > 1 { print $1 }' "$r/micro.csv" | sort -un); do median_of "$r/micro.csv" "$g" memory; done | sort -g | tail -1)
    echo "| PoCL: warm disk hit ≤ 1.10 × floor | worst size: $(printf %.2f "$warm") × | $(verdict "$warm" 1.10 "<=") |"
    echo "| PoCL: miss overhead ≤ 2 % (capture = build; the default on PoCL is auto: Part 8) | worst size: $over % | $(verdict "$over" 2 "<=") |"
    echo "| PoCL: miss overhead ≤ 2 % (capture = release; clBuildProgram only, the read moves to release) | worst size: $over_release % | $(verdict "$over_release" 2 "<=") |"
    echo "| PoCL: memory hit ≤ 50 µs | worst size: $mem µs (median of builds 2-11 of one source in one process) | $(verdict "$mem" 50 "<=") |"
  else
    echo "| PoCL micro targets | not run | |"
  fi
  if [ -f "$r/next_run.csv" ]; then
    local app worst_nc="0 -" worst_pw="0 -" worst_cold="0 -" ratio
    for app in $(awk -F, 'NR > 1 { print $1 }' "$r/next_run.csv" | sort -u); do
      ratio() { awk -v a="$(median_of "$r/next_run.csv" "$app" "$1")" -v b="$(median_of "$r/next_run.csv" "$app" "$2")" 'BEGIN { printf "%.2f", a / b }'; }
      worst_nc=$(printf '%s\n%s %s\n' "$worst_nc" "$(ratio run2 no_cache)" "$app" | sort -g | tail -1)
      worst_pw=$(printf '%s\n%s %s\n' "$worst_pw" "$(ratio run2 pocl_warm)" "$app" | sort -g | tail -1)
      worst_cold=$(printf '%s\n%s %s\n' "$worst_cold" "$(ratio cold no_cache)" "$app" | sort -g | tail -1)
    done
    echo "| second run (Part 10): run 2, started as run 1 exits, ≤ no cache | worst: ${worst_nc% *} × (${worst_nc#* }) | $(verdict "${worst_nc% *}" 1.00 "<=") |"
    echo "| second run: run 2 ≤ 1.10 × PoCL's own second run | worst: ${worst_pw% *} × (${worst_pw#* }) | $(verdict "${worst_pw% *}" 1.10 "<=") |"
    echo "| second run: cold ≤ 1.05 × no cache (idle) | worst: ${worst_cold% *} × (${worst_cold#* }) | $(verdict "${worst_cold% *}" 1.05 "<=") |"
  fi
  if [ -f "$r/next_run-busy.csv" ]; then
    local worst_busy="0 -"
    for app in $(awk -F, 'NR > 1 { print $1 }' "$r/next_run-busy.csv" | sort -u); do
      worst_busy=$(printf '%s\n%s %s\n' "$worst_busy" "$(awk -v a="$(median_of "$r/next_run-busy.csv" "$app" cold)" -v b="$(median_of "$r/next_run-busy.csv" "$app" no_cache)" 'BEGIN { printf "%.2f", a / b }')" "$app" | sort -g | tail -1)
    done
    echo "| second run: cold ≤ 1.10 × no cache, every core loaded (Part 10, BENCH_BUSY) | worst: ${worst_busy% *} × (${worst_busy#* }) | $(verdict "${worst_busy% *}" 1.10 "<=") |"
  fi
  if [ -f "$r/clblast.csv" ]; then
    local worst variant label
    for variant in jc_warm jc_release_warm; do
      label="capture = build"; [ "$variant" = jc_release_warm ] && label="capture = release"
      worst=$(ratio_max "$r/clblast.csv" "$variant" pocl_warm)
      echo "| clblast: jitcache warm ≤ PoCL kcache warm ($label) | worst test: $(printf %.2f "$worst") × PoCL warm | $(verdict "$worst" 1.0 "<=") |"
    done
    local failed
    failed=$(awk -F, 'NR > 1 && $5 != 1' "$r/clblast.csv" | wc -l)
    echo "| clblast: all tests pass under jitcache | $failed failing runs | $( [ "$failed" = 0 ] && echo met || echo '**missed**') |"
  else
    echo "| clblast targets | not run | |"
  fi
  if [ -f "$r/clients.csv" ]; then
    local app best alone together worst_alone="0 -" worst_together="0 -" wrong
    for app in $(awk -F, 'NR > 1 { print $1 }' "$r/clients.csv" | sort -u); do
      # the best single cache (the app's or PoCL's); both together are the second target's baseline
      best=$(for v in app_warm pocl_warm; do median_of "$r/clients.csv" "$app" "$v"; done | { grep -v nan || true; } | sort -g | head -1)
      [ -n "$best" ] || continue  # a partial row (no warm run of any other cache yet)
      alone=$(awk -v a="$(median_of "$r/clients.csv" "$app" jc_warm)" -v b="$best" 'BEGIN { printf "%.2f", a / b }')
      together=$(awk -v a="$(median_of "$r/clients.csv" "$app" all_warm)" -v b="$(median_of "$r/clients.csv" "$app" others_warm)" 'BEGIN { printf "%.2f", a / b }')
      worst_alone=$(printf '%s\n%s %s\n' "$worst_alone" "$alone" "$app" | sort -g | tail -1)
      worst_together=$(printf '%s\n%s %s\n' "$worst_together" "$together" "$app" | sort -g | tail -1)
    done
    echo "| clients: jitcache warm alone ≤ 1.10 × the best other warm cache (the app's own or PoCL's) | worst: ${worst_alone% *} × (${worst_alone#* }) | $(verdict "${worst_alone% *}" 1.10 "<=") |"
    echo "| clients: jitcache with the app's and PoCL's caches warm ≤ those caches alone | worst: ${worst_together% *} × (${worst_together#* }) | $(verdict "${worst_together% *}" 1.00 "<=") |"
    wrong=$(awk -F, 'NR > 1 && $5 != 1' "$r/clients.csv" | wc -l)
    echo "| clients: every run's result equals the no-cache run's | $wrong wrong runs | $( [ "$wrong" = 0 ] && echo met || echo '**missed**') |"
  else
    echo "| clients targets | not run | |"
  fi
  if [ -f "$r/gpu.csv" ]; then
    local g
    g=$(ratio_max "$r/gpu.csv" jc_warm cc_warm)
    echo "| NVIDIA: jitcache warm ≤ 0.5 × ComputeCache warm | worst size: $(printf %.2f "$g") × | $(verdict "$g" 0.5 "<=") |"
    g=$(ratio_max "$r/gpu.csv" both_warm cc_warm)
    echo "| NVIDIA: jitcache + ComputeCache warm ≤ 0.5 × ComputeCache warm | worst size: $(printf %.2f "$g") × | $(verdict "$g" 0.5 "<=") |"
  else
    echo "| NVIDIA: jitcache warm ≤ 0.5 × ComputeCache warm | not run yet (see Part 3) | |"
  fi
  if [ -f "$r/gpu-cold.md" ]; then
    local first
    first=$(awk -F'|' '$3 ~ /build/ { gsub(/[ %]/, "", $7); print $7 }' "$r/gpu-cold.md" | sort -g | tail -1)
    echo "| NVIDIA: cold overhead ≤ 2 % at 1 and 10 KiB (jitcache inside the first clBuildProgram of a process) | worst size: $first % | $(verdict "$first" 2 "<=") |"
  fi
  local csv where
  for csv in "$r/many.csv" "$r/many-16cores.csv"; do
    [ -f "$csv" ] || continue
    where="this machine"; [[ "$csv" == *16cores* ]] && where="16 cores"
    local one many compiles ratio
    one=$(awk -F, '$1 == "one" { print $3 }' "$csv" | median)
    many=$(awk -F, '$1 == "many" { print $3 }' "$csv" | median)
    compiles=$(awk -F, '$1 == "many" { print $4 }' "$csv" | median)
    ratio=$(awk -v a="$many" -v b="$one" 'BEGIN { printf "%.2f", a / b }')
    echo "| 16 processes ($where): one compile per key | $compiles compiles for 1 key | $(verdict "$compiles" 1 "<=") |"
    echo "| 16 processes ($where): wall ≤ 1.3 × one process | $ratio × | $(verdict "$ratio" 1.3 "<=") |"
  done
  for csv in "$r/scale.csv" "$r/scale-1m.csv"; do
    [ -f "$csv" ] || continue
    value() { awk -F, -v m="$1" '$1 == m { print $2 }' "$csv"; }
    local n evict_ratio
    n=$(awk -v e="$(value entries)" 'BEGIN { print (e >= 1e6) ? e / 1e6 "M" : e / 1e3 "k" }')
    evict_ratio=$(awk -v a="$(value eviction_pass)" -v b="$(value rm_floor)" 'BEGIN { printf "%.2f", a / b }')
    echo "| $n entries: lookup p99 ≤ 100 µs | $(value lookup_p99) µs | $(verdict "$(value lookup_p99)" 100 "<=") |"
    echo "| $n entries: automatic pass ≤ 50 ms | $(value auto_pass) ms | $(verdict "$(value auto_pass)" 50 "<=") |"
    echo "| $n entries: \`evict\` to half ≤ 1.2 × \`rm\` | $evict_ratio × | $(verdict "$evict_ratio" 1.2 "<=") |"
    echo "| $n entries: \`ls \| head\` ≤ 100 ms | $(value cli_ls_head) ms | $(verdict "$(value cli_ls_head)" 100 "<=") |"
    [ "$n" = 100k ] && echo "| 100k entries: full \`ls\` ≤ 1 s | $(value cli_ls) ms | $(verdict "$(value cli_ls)" 1000 "<=") |"
    echo "| $n entries: store ≥ 6 800 entries/s | $(value store_throughput | cut -d. -f1)/s | $(verdict "$(value store_throughput)" 6800 ">=") |"
  done
  if [ -f "$r/pack.csv" ]; then
    pack_value() { awk -F, -v b="$1" -v m="$2" '$1 == b && $2 == m { print $3 }' "$r/pack.csv"; }
    local b
    for b in 4096 16384 65536; do
      echo "| packs, 10 000 entries of $((b / 1024)) KiB: lookup p99 ≤ 50 µs (unsigned / signed pack) | $(pack_value $b hit_p99) / $(pack_value $b signed_hit_p99) µs | $(verdict "$(pack_value $b hit_p99)" 50 "<=") / $(verdict "$(pack_value $b signed_hit_p99)" 50 "<=") |"
    done
    echo "| packs: building ≤ 2 × copying the same bytes (from memory) | $(pack_value 16384 write_vs_copy) × | $(verdict "$(pack_value 16384 write_vs_copy)" 2 "<=") |"
    echo "| packs: \`pack create\` path ≤ 2 × \`cp -r\` of the store | $(pack_value 16384 create_vs_cp) × | $(verdict "$(pack_value 16384 create_vs_cp)" 2 "<=") |"
  fi
}

section() {  # title, fragment, plot
  echo
  echo "## $1"
  echo
  if [ -f "$r/$2.md" ]; then
    cat "$r/$2.md"
    if [ -f "$r/$2-16cores.md" ]; then
      printf '\nThe same script on the GPU machine'"'"'s 16 CPU cores (Intel Xeon, ext4 on a virtual disk; raw: [benchmarks/%s-16cores.csv](benchmarks/%s-16cores.csv)):\n\n' "$2" "$2"
      cat "$r/$2-16cores.md"
    fi
    if [ -f "$r/$2-busy.md" ]; then
      printf '\nThe same script on this machine with every core loaded by other work (`BENCH_BUSY`; raw: [benchmarks/%s-busy.csv](benchmarks/%s-busy.csv)):\n\n' "$2" "$2"
      cat "$r/$2-busy.md"
    fi
    if [ -f "$r/$2-1m.md" ]; then
      printf '\nThe same at 1 000 000 entries (raw: [benchmarks/%s-1m.csv](benchmarks/%s-1m.csv)):\n\n' "$2" "$2"
      cat "$r/$2-1m.md"
    fi
    [ -f "$r/$2.png" ] && printf '\n![%s](benchmarks/%s.png)\n' "$1" "$2"
    printf '\nRaw numbers: [benchmarks/%s.csv](benchmarks/%s.csv).\n' "$2" "$2"
  else
    echo "Not run on this machine yet: \`bench/$2.sh\`."
  fi
  [ -f "$repo/bench/notes/$2.md" ] && { echo; cat "$repo/bench/notes/$2.md"; }
  return 0
}

{
  echo "# Benchmarks"
  echo
  echo "Generated by \`bench/run-all.sh\` (CPU parts) and \`bench/gpu.sh\` (GPU part), assembled by"
  echo "\`bench/report.sh\`. Do not edit by hand: the comments come from \`bench/notes/\`."
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- . ':!docs' || echo ' (with local changes)')"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores online; load average at report time: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- OpenCL (CPU): $(clinfo 2>/dev/null | sed -n 's/^ *Platform Version *//p' | head -1)"
  echo "- GPU: $(cat "$r/gpu-device.txt" 2>/dev/null || echo 'not measured yet')"
  echo
  echo "## Targets"
  echo
  targets
  section "Part 1: per-build micro benchmark (PoCL, POCL_KERNEL_CACHE=0)" micro
  section "Part 2: a real client, clblast-tests on PoCL" clblast
  section "Part 3: NVIDIA OpenCL on a data-centre GPU" gpu
  section "Part 4: 16 processes at once on an empty cache" many
  section "Part 5: a store with 100k and 1M entries" scale
  section "Part 6: real clients against the caches they already have (PoCL)" clients
  section "Part 7: packs" pack
  section "Part 8: capture outside the app and jitcache warm (PoCL, issue 16)" capture
  section "Part 9: what a miss costs inside the app on NVIDIA (issue 16)" gpu-cold
  section "Part 10: the second run, started the moment the first exits (PoCL, issue 32)" next_run
  section "Part 11: the fixed cost of a warm disk hit, NVIDIA and PoCL (issue 32.4)" warm-hit-floor
} > "$doc"
echo "wrote $doc"
