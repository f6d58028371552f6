#!/usr/bin/env bash
# Part 9 (issue 16): what a miss costs on NVIDIA's OpenCL driver, where the binary read is a copy
# of the PTX. Whole processes of build_timer, interleaved rep by rep (the order flips every rep),
# after one untimed warm-up of each variant, with NVIDIA's ComputeCache off so that every run
# compiles:
#   plain    no jitcache
#   build    jitcache on an empty cache, capture = build (what `auto` picks on NVIDIA)
#   helper   jitcache on an empty cache, capture = helper (for comparison)
# Each process builds BENCH_BUILDS distinct programs (build_timer --distinct: every build a miss),
# so that the first miss of a process (which also pays jitcache's one-time setup) can be told from
# the later ones. Each row holds the process wall time and the in-process time of one build;
# jitcache's runs also leave their traces (timings_us: hash, lookup, build, store) in a tarball,
# so that bench/gpu-cold-report.py can split the overhead into its parts. Runs on the GPU machine from a prebuilt dir (bench/pack-gpu.sh):
#   BUILD_DIR=$PWD/gpu-build BENCH_RESULTS=$OUT bench/gpu-cold.sh
#   BENCH_SIZES="1024 10240"  BENCH_REPS=11  BENCH_BUILDS=3
# Writes gpu-cold.csv, gpu-cold-traces.tar.gz and gpu-device.txt into BENCH_RESULTS.
BENCH_NO_BUILD=${BENCH_NO_BUILD:-1}
source "$(dirname "$0")/common.sh"
ensure_built
[ -d "$build/lib" ] && export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
mkdir -p "$work/icd" "$work/traces"
echo "${NVIDIA_OPENCL_LIBRARY:-libnvidia-opencl.so.1}" > "$work/icd/nvidia.icd"
export OCL_ICD_VENDORS=$work/icd CUDA_CACHE_DISABLE=1
export JITCACHE_HELPER=$build/tools/jitcache
sizes=${BENCH_SIZES:-1024 10240}
reps=${BENCH_REPS:-11}
builds=${BENCH_BUILDS:-3}
csv=$results/gpu-cold.csv
echo "size,variant,rep,build,wall_us,build_us" > "$csv"
"$repo/bench/gen_corpus.sh" "$work" $sizes
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader \
  > "$results/gpu-device.txt" 2>/dev/null || true

now_us() { echo $(($(date +%s%N) / 1000)); }
# One whole process of a variant; prints "<build>,<wall_us>,<build_us>" per build.
run_variant() {
  local variant=$1 source=$2 trace_dir=$3 cache start end build_us
  cache=$(fresh_cache_dir)
  start=$(now_us)
  case $variant in
    plain) build_us=$("$timer" --device "${BENCH_DEVICE:-gpu}" --source "$source" --reps "$builds" --distinct)
           end=$(now_us) ;;
    *)
      build_us=$(JITCACHE_DIR=$cache JITCACHE_CAPTURE=$variant JITCACHE_TRACE=1 \
                 JITCACHE_TRACE_DIR=$trace_dir LD_PRELOAD=$shim "$timer" --device "${BENCH_DEVICE:-gpu}" --source "$source" \
                 --reps "$builds" --distinct)
      end=$(now_us)
      # A helper works on after the app: wait for it (untimed) so it cannot slow the next run.
      while pgrep -f "$build/tools/jitcache replay" >/dev/null; do sleep 0.1; done
      ;;
  esac
  rm -rf "$cache"
  awk -v wall=$((end - start)) '{ print NR "," wall "," $1 }' <<<"$build_us"
}

for size in $sizes; do
  src=$work/k$size.cl
  for variant in plain build helper; do run_variant "$variant" "$src" "$work/warmup" >/dev/null; done
  for rep in $(seq 1 "$reps"); do
    order="plain build helper"; [ $((rep % 2)) = 0 ] && order="helper build plain"
    for variant in $order; do
      mkdir -p "$work/traces/$size-$variant-$rep"
      run_variant "$variant" "$src" "$work/traces/$size-$variant-$rep" | sed "s/^/$size,$variant,$rep,/" >> "$csv"
    done
  done
  echo "size $size done" >&2
done
tar -C "$work" -czf "$results/gpu-cold-traces.tar.gz" traces
cat "$csv"
rm -rf "$work"
