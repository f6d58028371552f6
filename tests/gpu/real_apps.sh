#!/usr/bin/env bash
# Real apps on the GPU machine (NVIDIA's OpenCL driver), each plain, then twice under jitcache on an
# empty cache (cold, then warm, back to back), outputs compared with the plain run's; traces counted.
# Runs from the repo root with prebuilt binaries (the GPU machine has no compilers):
#   APPS_BIN   folder with opencl_example, opencl_release_early, opencl_context_churn (gpu-build/apps)
#   JITCACHE_LIB  libjitcache.so (gpu-build/shim/libjitcache.so); its tool beside it in ../tools
#   OUT        where the summary goes (default: a temp dir)
#   GPU_ICD    the driver library (libnvidia-opencl.so.1); only its platform may be listed
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${APPS_BIN:-$repo/gpu-build/apps}
lib=${JITCACHE_LIB:-$repo/gpu-build/shim/libjitcache.so}
out=${OUT:-$(mktemp -d)}
work=$(mktemp -d)
mkdir -p "$out"
mkdir -p "$work/icd"
echo "${GPU_ICD:-libnvidia-opencl.so.1}" > "$work/icd/gpu.icd"
export OCL_ICD_VENDORS=$work/icd OCL_ICD_FILENAMES=${GPU_ICD:-libnvidia-opencl.so.1}
summary=$out/real-apps.txt
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }

declare -A apps=(
  [example]="$bin/opencl_example --kernels $repo/examples/opencl/kernels"
  [release_early]="$bin/opencl_release_early 30"
  [release_early_binary]="$bin/opencl_release_early 30 --binary-between"
  [context_churn]="$bin/opencl_context_churn ${CHURN_ROUNDS:-100}"
  [opencv_umat]="${PYTHON:-python3} $repo/bench/clients/opencv_umat.py"
)
failures=0
for name in example release_early release_early_binary context_churn opencv_umat; do
  read -r -a argv <<< "${apps[$name]}"
  plain_out=$work/$name.plain
  env -u LD_PRELOAD -u OPENCL_LAYERS OPENCV_OPENCL_CACHE_ENABLE=0 OPENCV_OPENCL_DEVICE=${OPENCV_DEVICE:-:GPU:} \
    "${argv[@]}" > "$plain_out" 2> "$work/$name.plain.err"
  rc=$?
  cache=$work/cache-$name
  line="$name: plain rc=$rc"
  for round in cold warm; do
    traces=$work/traces-$name-$round
    start=$(date +%s%N)
    env JITCACHE_DIR=$cache JITCACHE_TRACE=1 JITCACHE_TRACE_DIR=$traces LD_PRELOAD=$lib \
      OPENCV_OPENCL_CACHE_ENABLE=0 OPENCV_OPENCL_DEVICE=${OPENCV_DEVICE:-:GPU:} \
      "${argv[@]}" > "$work/$name.$round" 2> "$work/$name.$round.err"
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    same=same; cmp -s "$plain_out" "$work/$name.$round" || { same=DIFFERENT; failures=$((failures + 1)); }
    [ "$rc" = 0 ] || failures=$((failures + 1))
    verdicts=$(cat "$traces"/*.json 2>/dev/null | grep -o '"verdict": *"[a-z_]*"' | sed 's/.*"\([a-z_]*\)"$/\1/' | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}')
    line+="; $round rc=$rc ${ms}ms output $same, $verdicts"
  done
  say "$line"
  if [ "$name" = context_churn ]; then
    for round in plain cold warm; do
      say "  $round: $(tr '\n' ' ' < "$work/$name.$round") $(grep peak_rss "$work/$name.$round.err")"
    done
  fi
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$summary" 2>/dev/null
say "real apps: $failures failures"
tar -czf "$out/real-apps-logs.tgz" -C "$work" --exclude='cache-*' . 2>/dev/null
[ "$failures" = 0 ]
