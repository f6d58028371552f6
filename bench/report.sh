#!/usr/bin/env bash
# Assembles docs/benchmarks.md from the results the part scripts left in bench/results/ and the
# hand-kept text in bench/notes/: the Targets table (bench/notes/targets.md: one short row per
# target, its latest number, date and verdict), each part's table with its notes, then the machine,
# date and commit of this assembly and the targets as computed from each part's CSV. Parts that
# have not been run (no CSV) are listed as such. Older runs and the earlier, long Targets table are
# kept by hand in docs/benchmarks-history.md, which this script does not write. Links written here
# are relative to docs/ (the page's folder), so a result is ../bench/results/<file>.
# BENCH_REPORT=FILE writes FILE instead of docs/benchmarks.md (to compare before replacing it).
# Not everything on the committed page comes from here yet: Parts 5-8 hold hand-written runs and
# tables beyond bench/results/<part>.md and bench/notes/<part>.md, which a plain run drops. Write
# to another file first, diff, and move what is missing into bench/notes/ (or
# docs/benchmarks-history.md).
source "$(dirname "$0")/common.sh"
doc=${BENCH_REPORT:-$repo/docs/benchmarks.md}
r=$results

# The day a result file was last committed (UTC), or its modification day while it has changes
# that are not committed (a run of this machine that nobody committed yet). A move is not a run:
# --follow --diff-filter=r looks past the commits that only renamed the file.
result_date() {
  local d=""
  if git -C "$repo" ls-files --error-unmatch -- "$1" >/dev/null 2>&1 && git -C "$repo" diff --quiet HEAD -- "$1"; then
    d=$(TZ=UTC git -C "$repo" log -1 --follow --diff-filter=r --date=short-local --format=%cd -- "$1")
  fi
  [ -n "$d" ] || d=$(date -u -r "$1" +%Y-%m-%d)
  echo "$d"
}
row() { echo "| $1 | $2 | $(result_date "$3") | $4 |"; }  # target, measured, result file, verdict

ratio_max() {  # CSV, numerator variant, denominator variant: the worst per-group ratio of medians
  local csv=$1 groups
  groups=$(awk -F, 'NR > 1 { print $1 }' "$csv" | sort -u)
  for g in $groups; do
    awk -v a="$(median_of "$csv" "$g" "$2")" -v b="$(median_of "$csv" "$g" "$3")" 'BEGIN { print a / b }'
  done | sort -g | tail -1
}
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? v <= t : v >= t; print ok ? "met" : "**missed**" }'; }

computed_targets() {
  echo "| target | measured | date | verdict |"
  echo "|---|---|---|---|"
  if [ -f "$r/micro.csv" ]; then
    local warm over over_release mem
    warm=$(ratio_max "$r/micro.csv" warm_disk floor)
    over=$(awk -v x="$(ratio_max "$r/micro.csv" cold_shim cold)" 'BEGIN { printf "%.1f", (x - 1) * 100 }')
    over_release=$(awk -v x="$(ratio_max "$r/micro.csv" cold_release cold)" 'BEGIN { printf "%.1f", (x - 1) * 100 }')
    mem=$(for g in $(awk -F, 'NR > 1 { print $1 }' "$r/micro.csv" | sort -un); do median_of "$r/micro.csv" "$g" memory; done | sort -g | tail -1)
    row "PoCL: warm disk hit ≤ 1.10 × floor" "worst size: $(printf %.2f "$warm") ×" "$r/micro.csv" "$(verdict "$warm" 1.10 "<=")"
    row "PoCL: miss overhead ≤ 2 % (capture = build; the default on PoCL is auto: Part 8)" "worst size: $over %" "$r/micro.csv" "$(verdict "$over" 2 "<=")"
    row "PoCL: miss overhead ≤ 2 % (capture = release; clBuildProgram only, the read moves to release)" "worst size: $over_release %" "$r/micro.csv" "$(verdict "$over_release" 2 "<=")"
    row "PoCL: memory hit ≤ 50 µs" "worst size: $mem µs (median of builds 2-11 of one source in one process)" "$r/micro.csv" "$(verdict "$mem" 50 "<=")"
  else
    echo "| PoCL micro targets | not run | | |"
  fi
  if [ -f "$r/next_run.csv" ]; then
    local app worst_nc="0 -" worst_pw="0 -" worst_cold="0 -" ratio
    for app in $(awk -F, 'NR > 1 { print $1 }' "$r/next_run.csv" | sort -u); do
      ratio() { awk -v a="$(median_of "$r/next_run.csv" "$app" "$1")" -v b="$(median_of "$r/next_run.csv" "$app" "$2")" 'BEGIN { printf "%.2f", a / b }'; }
      worst_nc=$(printf '%s\n%s %s\n' "$worst_nc" "$(ratio run2 no_cache)" "$app" | sort -g | tail -1)
      worst_pw=$(printf '%s\n%s %s\n' "$worst_pw" "$(ratio run2 pocl_warm)" "$app" | sort -g | tail -1)
      worst_cold=$(printf '%s\n%s %s\n' "$worst_cold" "$(ratio cold no_cache)" "$app" | sort -g | tail -1)
    done
    row "second run (Part 10): run 2, started as run 1 exits, ≤ no cache" "worst: ${worst_nc% *} × (${worst_nc#* })" "$r/next_run.csv" "$(verdict "${worst_nc% *}" 1.00 "<=")"
    row "second run: run 2 ≤ 1.10 × PoCL's own second run" "worst: ${worst_pw% *} × (${worst_pw#* })" "$r/next_run.csv" "$(verdict "${worst_pw% *}" 1.10 "<=")"
    row "second run: cold ≤ 1.05 × no cache (idle)" "worst: ${worst_cold% *} × (${worst_cold#* })" "$r/next_run.csv" "$(verdict "${worst_cold% *}" 1.05 "<=")"
  fi
  if [ -f "$r/next_run-busy.csv" ]; then
    local worst_busy="0 -"
    for app in $(awk -F, 'NR > 1 { print $1 }' "$r/next_run-busy.csv" | sort -u); do
      worst_busy=$(printf '%s\n%s %s\n' "$worst_busy" "$(awk -v a="$(median_of "$r/next_run-busy.csv" "$app" cold)" -v b="$(median_of "$r/next_run-busy.csv" "$app" no_cache)" 'BEGIN { printf "%.2f", a / b }')" "$app" | sort -g | tail -1)
    done
    row "second run: cold ≤ 1.10 × no cache, every core loaded (Part 10, BENCH_BUSY)" "worst: ${worst_busy% *} × (${worst_busy#* })" "$r/next_run-busy.csv" "$(verdict "${worst_busy% *}" 1.10 "<=")"
  fi
  if [ -f "$r/clblast.csv" ]; then
    local worst variant label
    for variant in jc_warm jc_release_warm; do
      label="capture = build"; [ "$variant" = jc_release_warm ] && label="capture = release"
      worst=$(ratio_max "$r/clblast.csv" "$variant" pocl_warm)
      row "clblast: jitcache warm ≤ PoCL kcache warm ($label)" "worst test: $(printf %.2f "$worst") × PoCL warm" "$r/clblast.csv" "$(verdict "$worst" 1.0 "<=")"
    done
    local failed
    failed=$(awk -F, 'NR > 1 && $5 != 1' "$r/clblast.csv" | wc -l)
    row "clblast: all tests pass under jitcache" "$failed failing runs" "$r/clblast.csv" "$( [ "$failed" = 0 ] && echo met || echo '**missed**')"
  else
    echo "| clblast targets | not run | | |"
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
    row "clients: jitcache warm alone ≤ 1.10 × the best other warm cache (the app's own or PoCL's)" "worst: ${worst_alone% *} × (${worst_alone#* })" "$r/clients.csv" "$(verdict "${worst_alone% *}" 1.10 "<=")"
    row "clients: jitcache with the app's and PoCL's caches warm ≤ those caches alone" "worst: ${worst_together% *} × (${worst_together#* })" "$r/clients.csv" "$(verdict "${worst_together% *}" 1.00 "<=")"
    wrong=$(awk -F, 'NR > 1 && $5 != 1' "$r/clients.csv" | wc -l)
    row "clients: every run's result equals the no-cache run's" "$wrong wrong runs" "$r/clients.csv" "$( [ "$wrong" = 0 ] && echo met || echo '**missed**')"
  else
    echo "| clients targets | not run | | |"
  fi
  if [ -f "$r/gpu.csv" ]; then
    local g
    g=$(ratio_max "$r/gpu.csv" jc_warm cc_warm)
    row "NVIDIA: jitcache warm ≤ 0.5 × ComputeCache warm" "worst size: $(printf %.2f "$g") ×" "$r/gpu.csv" "$(verdict "$g" 0.5 "<=")"
    g=$(ratio_max "$r/gpu.csv" both_warm cc_warm)
    row "NVIDIA: jitcache + ComputeCache warm ≤ 0.5 × ComputeCache warm" "worst size: $(printf %.2f "$g") ×" "$r/gpu.csv" "$(verdict "$g" 0.5 "<=")"
  else
    echo "| NVIDIA: jitcache warm ≤ 0.5 × ComputeCache warm | not run yet (see Part 3) | | |"
  fi
  if [ -f "$r/gpu-cold.md" ]; then
    local first
    first=$(awk -F'|' '$3 ~ /build/ { gsub(/[ %]/, "", $7); print $7 }' "$r/gpu-cold.md" | sort -g | tail -1)
    row "NVIDIA: cold overhead ≤ 2 % at 1 and 10 KiB (jitcache inside the first clBuildProgram of a process)" "worst size: $first %" "$r/gpu-cold.md" "$(verdict "$first" 2 "<=")"
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
    row "16 processes ($where): one compile per key" "$compiles compiles for 1 key" "$csv" "$(verdict "$compiles" 1 "<=")"
    row "16 processes ($where): wall ≤ 1.3 × one process" "$ratio ×" "$csv" "$(verdict "$ratio" 1.3 "<=")"
  done
  for csv in "$r/scale.csv" "$r/scale-1m.csv"; do
    [ -f "$csv" ] || continue
    value() { awk -F, -v m="$1" '$1 == m { print $2 }' "$csv"; }
    local n evict_ratio
    n=$(awk -v e="$(value entries)" 'BEGIN { print (e >= 1e6) ? e / 1e6 "M" : e / 1e3 "k" }')
    # a measure the run skipped (BENCH_SKIP_EVICT, BENCH_SKIP_FULL_LIST) has no row
    [ -n "$(value lookup_p99)" ] && row "$n entries: lookup p99 ≤ 100 µs" "$(value lookup_p99) µs" "$csv" "$(verdict "$(value lookup_p99)" 100 "<=")"
    [ -n "$(value auto_pass)" ] && row "$n entries: automatic pass ≤ 50 ms" "$(value auto_pass) ms" "$csv" "$(verdict "$(value auto_pass)" 50 "<=")"
    if [ -n "$(value eviction_pass)" ] && [ -n "$(value rm_floor)" ]; then
      evict_ratio=$(awk -v a="$(value eviction_pass)" -v b="$(value rm_floor)" 'BEGIN { printf "%.2f", a / b }')
      row "$n entries: \`evict\` to half ≤ 1.2 × \`rm\`" "$evict_ratio ×" "$csv" "$(verdict "$evict_ratio" 1.2 "<=")"
    fi
    [ -n "$(value cli_ls_head)" ] && row "$n entries: \`ls \| head\` ≤ 100 ms" "$(value cli_ls_head) ms" "$csv" "$(verdict "$(value cli_ls_head)" 100 "<=")"
    [ "$n" = 100k ] && [ -n "$(value cli_ls)" ] && row "100k entries: full \`ls\` ≤ 1 s" "$(value cli_ls) ms" "$csv" "$(verdict "$(value cli_ls)" 1000 "<=")"
    [ -n "$(value store_throughput)" ] && row "$n entries: store ≥ 6 800 entries/s" "$(value store_throughput | cut -d. -f1)/s" "$csv" "$(verdict "$(value store_throughput)" 6800 ">=")"
  done
  if [ -f "$r/pack.csv" ]; then
    # pack.csv: run,binary_bytes,metric,value,unit; one line per run of bench/pack.sh's rounds
    pack_values() { awk -F, -v b="$1" -v m="$2" 'NR > 1 && $2 == b && $3 == m { print $4 }' "$r/pack.csv" | sort -g; }
    pack_range() {  # binary size, metric, printf format: the runs' lowest-highest
      pack_values "$1" "$2" | awk -v f="$3" 'NR == 1 { lo = $1 } { hi = $1 } END {
        if (NR == 0) print "not measured"; else if (lo == hi) printf f, lo; else printf f "-" f, lo, hi }'
    }
    pack_verdict() {  # the worst run decides
      local worst
      worst=$(pack_values "$1" "$2" | tail -1)
      if [ -n "$worst" ]; then verdict "$worst" "$3" "<="; else echo "not measured"; fi
    }
    local b
    for b in 4096 16384 65536; do
      row "packs, 10 000 entries of $((b / 1024)) KiB: lookup p99 ≤ 50 µs (unsigned / signed pack)" "$(pack_range $b hit_p99 %.1f) / $(pack_range $b signed_hit_p99 %.1f) µs" "$r/pack.csv" "$(pack_verdict $b hit_p99 50) / $(pack_verdict $b signed_hit_p99 50)"
    done
    row "packs: building ≤ 2 × copying the same bytes (from memory)" "$(pack_range 16384 write_vs_copy %.2f) ×" "$r/pack.csv" "$(pack_verdict 16384 write_vs_copy 2)"
    row "packs: \`pack create\` path ≤ 2 × \`cp -r\` of the store" "$(pack_range 16384 create_vs_cp %.2f) ×" "$r/pack.csv" "$(pack_verdict 16384 create_vs_cp 2)"
  fi
}

section() {  # title, fragment, plot
  echo
  echo "## $1"
  echo
  if [ -f "$r/$2.md" ]; then
    cat "$r/$2.md"
    if [ -f "$r/$2-16cores.md" ]; then
      printf '\nThe same script on the GPU machine'"'"'s 16 CPU cores (Intel Xeon, ext4 on a virtual disk; raw: [bench/results/%s-16cores.csv](../bench/results/%s-16cores.csv)):\n\n' "$2" "$2"
      cat "$r/$2-16cores.md"
    fi
    if [ -f "$r/$2-busy.md" ]; then
      printf '\nThe same script on this machine with every core loaded by other work (`BENCH_BUSY`; raw: [bench/results/%s-busy.csv](../bench/results/%s-busy.csv)):\n\n' "$2" "$2"
      cat "$r/$2-busy.md"
    fi
    if [ -f "$r/$2-1m.md" ]; then
      printf '\nThe same at 1 000 000 entries (raw: [bench/results/%s-1m.csv](../bench/results/%s-1m.csv)):\n\n' "$2" "$2"
      cat "$r/$2-1m.md"
    fi
    [ -f "$r/$2.png" ] && printf '\n![%s](../bench/results/%s.png)\n' "$1" "$2"
    printf '\nRaw numbers: [bench/results/%s.csv](../bench/results/%s.csv).\n' "$2" "$2"
  else
    echo "Not run on this machine yet: \`bench/$2.sh\`."
  fi
  [ -f "$repo/bench/notes/$2.md" ] && { echo; cat "$repo/bench/notes/$2.md"; }
  return 0
}

{
  echo "# Benchmarks"
  echo
  echo "Every speed target with its latest measured number, the day (UTC) it was measured (where its part"
  echo "names no day: the day its raw numbers were committed) and the verdict. The part in the last column"
  echo "has the runs, the method, the raw numbers and why a target is missed. Earlier runs and the earlier,"
  echo "longer Targets table: [benchmarks-history.md](benchmarks-history.md)."
  echo
  echo "## Targets"
  echo
  if [ -f "$repo/bench/notes/targets.md" ]; then
    cat "$repo/bench/notes/targets.md"
  else
    echo "Not written yet: \`bench/notes/targets.md\` (the targets computed from the CSVs are at the end)."
  fi
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
  section "Part 12: what a cold run costs in CPU, the app and its capture helper (PoCL, issue 39)" cold_cpu
  echo
  echo "## How this page was assembled"
  echo
  echo "\`bench/run-all.sh\` runs the CPU parts and \`bench/gpu.sh\` the GPU part; \`bench/report.sh\`"
  echo "assembles this page from their results in \`bench/results/\` and the hand-kept text in"
  echo "\`bench/notes/\` (the Targets table: \`bench/notes/targets.md\`). Do not edit this page by hand:"
  echo "edit those."
  echo
  echo "Where the files are: every data file a bench writes (CSV, JSON, PNG, traces, and each part's"
  echo "generated table, \`<part>.md\`) is in [bench/results/](../bench/results/), one file per result,"
  echo "beside the scripts that write them (\`BENCH_RESULTS\` in \`bench/common.sh\` names another folder)."
  echo "This page, [benchmarks-remote.md](benchmarks-remote.md) and the hand-kept"
  echo "[benchmarks-history.md](benchmarks-history.md) stay in \`docs/\`."
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- . ':!docs' ':!bench/results' || echo ' (with local changes)')"
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores online; load average at report time: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- OpenCL (CPU): $(clinfo 2>/dev/null | sed -n 's/^ *Platform Version *//p' | head -1)"
  echo "- GPU: $(cat "$r/gpu-device.txt" 2>/dev/null || echo 'not measured yet')"
  echo
  echo "The targets as computed from each part's main CSV: the last run of that part's script, on"
  echo "whichever machine ran it; date: the day the CSV was last committed. The Targets table at the"
  echo "top quotes the latest run of each target, which may be another script's or another machine's"
  echo "(16 cores, pinned CPUs, an A/B script); where the two differ, the part says why."
  echo
  computed_targets
} > "$doc"
echo "wrote $doc"
