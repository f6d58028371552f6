#!/usr/bin/env bash
# Part 3: the micro benchmark on an NVIDIA GPU through NVIDIA's OpenCL driver. Variants:
#   cold        CUDA_CACHE_DISABLE=1, no jitcache (the driver compiles OpenCL C -> PTX -> SASS)
#   cold_shim   CUDA_CACHE_DISABLE=1, jitcache on an empty cache (miss + store)
#   cc_warm     NVIDIA's ComputeCache warm (CUDA_CACHE_PATH filled by a first run), no jitcache
#   jc_warm     jitcache warm, ComputeCache off
#   both_warm   jitcache warm and ComputeCache warm (the default a user would have)
#   floor       CUDA_CACHE_DISABLE=1, clCreateProgramWithBinary + clBuildProgram of the PTX from a file
# Runs in one call on a machine with the NVIDIA driver and no build tools: point BUILD_DIR at a
# prebuilt dir holding shim/libjitcache.so and bench/build_timer (bench/pack-gpu.sh makes one).
# No .icd file is needed on the machine: one naming libnvidia-opencl.so.1 is written here.
#   BENCH_SIZES  BENCH_COLD_REPS=5  BENCH_WARM_REPS=11
# Writes gpu.csv, gpu.md, gpu.png into BENCH_RESULTS (default bench/results).
BENCH_NO_BUILD=${BENCH_NO_BUILD:-1}
source "$(dirname "$0")/common.sh"
ensure_built
[ -d "$build/lib" ] && export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
mkdir -p "$work/icd"
echo "${NVIDIA_OPENCL_LIBRARY:-libnvidia-opencl.so.1}" > "$work/icd/nvidia.icd"
export OCL_ICD_VENDORS=$work/icd
sizes=${BENCH_SIZES:-1024 10240 102400 1048576}
cold_reps=${BENCH_COLD_REPS:-5}
warm_reps=${BENCH_WARM_REPS:-11}
csv=$results/gpu.csv
echo "size,variant,rep,us" > "$csv"
"$repo/bench/gen_corpus.sh" "$work" $sizes
gpu() { "$timer" --device "${BENCH_DEVICE:-gpu}" "$@"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$results/gpu-device.txt" 2>/dev/null || true

for size in $sizes; do
  src=$work/k$size.cl
  cc_dir=$work/cc$size; jc_dir=""
  for rep in $(seq 1 "$cold_reps"); do
    dump=(); [ "$rep" = 1 ] && dump=(--dump-binary "$work/k$size.bin")
    echo "$size,cold,$rep,$(CUDA_CACHE_DISABLE=1 gpu --source "$src" "${dump[@]}")" >> "$csv"
    [ -n "$jc_dir" ] && rm -rf "$jc_dir"
    jc_dir=$(fresh_cache_dir)
    echo "$size,cold_shim,$rep,$(CUDA_CACHE_DISABLE=1 JITCACHE_DIR=$jc_dir LD_PRELOAD=$shim gpu --source "$src")" >> "$csv"
  done
  # Fill ComputeCache once (not timed); its directory is private to this run.
  CUDA_CACHE_PATH=$cc_dir gpu --source "$src" >/dev/null
  for rep in $(seq 1 "$warm_reps"); do
    echo "$size,floor,$rep,$(CUDA_CACHE_DISABLE=1 gpu --binary "$work/k$size.bin")" >> "$csv"
    echo "$size,cc_warm,$rep,$(CUDA_CACHE_PATH=$cc_dir gpu --source "$src")" >> "$csv"
    times=$(CUDA_CACHE_DISABLE=1 JITCACHE_DIR=$jc_dir LD_PRELOAD=$shim gpu --source "$src" --reps 3)
    echo "$size,jc_warm,$rep,$(sed -n 1p <<<"$times")" >> "$csv"
    echo "$size,memory,$rep,$(sed -n 3p <<<"$times")" >> "$csv"
    echo "$size,both_warm,$rep,$(CUDA_CACHE_PATH=$cc_dir JITCACHE_DIR=$jc_dir LD_PRELOAD=$shim gpu --source "$src")" >> "$csv"
  done
  echo "size $size done" >&2
done

{
  echo "| source size | cold, no cache | cold with jitcache | miss overhead | floor (PTX from file) | ComputeCache warm | jitcache warm | jitcache / ComputeCache | both warm | second build in process |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for size in $sizes; do
    m() { median_of "$csv" "$size" "$1"; }
    awk -v s="$size" -v c="$(m cold)" -v cs="$(m cold_shim)" -v f="$(m floor)" -v cc="$(m cc_warm)" \
        -v jc="$(m jc_warm)" -v b="$(m both_warm)" -v mem="$(m memory)" 'BEGIN {
      printf "| %d KiB | %.2f ms | %.2f ms | %+.1f %% | %.2f ms | %.2f ms | %.2f ms | %.2f | %.2f ms | %.1f µs |\n",
             s / 1024, c / 1000, cs / 1000, (cs / c - 1) * 100, f / 1000, cc / 1000, jc / 1000, jc / cc, b / 1000, mem }'
  done
} > "$results/gpu.md"
cat "$results/gpu.md"
for size in $sizes; do
  printf "%dKiB" $((size / 1024))
  for variant in cold cold_shim floor cc_warm jc_warm both_warm; do
    printf " %s" "$(median_of "$csv" "$size" "$variant" | awk '{ print $1 / 1000 }')"
  done
  echo
done > "$work/gpu.dat"
cp "$work/gpu.dat" "$results/gpu.dat"
command -v gnuplot >/dev/null && "$repo/bench/plot-gpu.sh" "$results"
rm -rf "$work"
