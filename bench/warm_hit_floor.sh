#!/usr/bin/env bash
# Issue 32.4: the fixed cost of a warm disk hit against the floor, on NVIDIA and on PoCL, with
# where the difference goes. Per driver and source size, rep by rep interleaved (fresh process
# each, drivers' own caches off):
#   floor       clCreateProgramWithBinary + clBuildProgram of the binary read from a file
#   binary_shim the same with jitcache loaded (the shim's pass-through cost for a binary program)
#   warm        jitcache warm disk hit (clCreateProgramWithSource + clBuildProgram); the same
#               process's third build is the memory hit (`memory`)
# build_timer --split gives each rep's create and build calls apart; a last round of traced warm
# runs gives jitcache's own phases (timings_us). Runs on a machine without build tools: point
# BUILD_DIR at a prebuilt dir (bench/pack-gpu.sh). BENCH_DRIVERS (nvidia pocl), BENCH_SIZES,
# BENCH_REPS (15; BENCH_BIG_REPS=11 for 100 KiB). Writes warm-hit-floor.csv and
# warm-hit-floor-traces.csv into BENCH_RESULTS.
BENCH_NO_BUILD=${BENCH_NO_BUILD:-1}
source "$(dirname "$0")/common.sh"
ensure_built
[ -d "$build/lib" ] && export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
csv=$results/warm-hit-floor.csv
traces_csv=$results/warm-hit-floor-traces.csv
echo "driver,size,variant,rep,total_us,create_us,build_us" > "$csv"
echo "driver,size,rep,hash,lookup,load,build,wait" > "$traces_csv"
sizes=${BENCH_SIZES:-1024 10240 102400}
"$repo/bench/gen_corpus.sh" "$work" $sizes

icd_dir() {  # a vendors folder holding only the driver asked for
  mkdir -p "$work/icd-$1"
  case $1 in
    nvidia) echo "${NVIDIA_OPENCL_LIBRARY:-libnvidia-opencl.so.1}" > "$work/icd-$1/nvidia.icd" ;;
    pocl) echo "${POCL_LIBRARY:-$(ls /usr/lib/x86_64-linux-gnu/libpocl.so* 2>/dev/null | head -1)}" > "$work/icd-$1/pocl.icd" ;;
  esac
  echo "$work/icd-$1"
}

for driver in ${BENCH_DRIVERS:-nvidia pocl}; do
  export OCL_ICD_VENDORS
  OCL_ICD_VENDORS=$(icd_dir "$driver")
  device=$([ "$driver" = nvidia ] && echo gpu || echo cpu)
  timed() {  # timed [NAME=VALUE ...] -- TIMER ARGUMENTS
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    POCL_KERNEL_CACHE=0 POCL_CACHE_DIR=$(mktemp -d -p "$work") CUDA_CACHE_DISABLE=1 \
      env ${vars[@]+"${vars[@]}"} "$timer" --device "$device" --split "$@"
  }
  row() { echo "$driver,$size,$1,$rep,$(tr ' ' , <<<"$2")" >> "$csv"; }
  for size in $sizes; do
    src=$work/k$size.cl
    cache=$(fresh_cache_dir)
    timed -- --source "$src" --dump-binary "$work/$driver-$size.bin" >/dev/null
    # Filled in the app (capture = build): no helper to wait for.
    timed JITCACHE_DIR="$cache" JITCACHE_CAPTURE=build LD_PRELOAD="$shim" -- --source "$src" >/dev/null
    reps=${BENCH_REPS:-15}
    [ "$size" -ge 102400 ] && reps=${BENCH_BIG_REPS:-11}
    for rep in $(seq "$reps"); do
      row floor "$(timed -- --binary "$work/$driver-$size.bin")"
      row binary_shim "$(timed JITCACHE_DIR="$cache" LD_PRELOAD="$shim" -- --binary "$work/$driver-$size.bin")"
      lines=$(timed JITCACHE_DIR="$cache" LD_PRELOAD="$shim" -- --source "$src" --reps 3)
      row warm "$(sed -n 1p <<<"$lines")"
      row memory "$(sed -n 3p <<<"$lines")"
    done
    for rep in 1 2 3 4 5; do
      trace_dir=$work/traces-$driver-$size-$rep
      timed JITCACHE_DIR="$cache" LD_PRELOAD="$shim" JITCACHE_TRACE=1 JITCACHE_TRACE_DIR="$trace_dir" \
        -- --source "$src" >/dev/null
      python3 - "$trace_dir" "$driver,$size,$rep" >> "$traces_csv" <<'EOF'
import json, pathlib, sys
for trace in pathlib.Path(sys.argv[1]).glob("*.json"):
    t = json.loads(trace.read_text()).get("timings_us", {})
    print(sys.argv[2] + "," + ",".join(str(t.get(k, "")) for k in ("hash", "lookup", "load", "build", "wait")))
EOF
    done
    rm -rf "$cache"
    echo "$driver $size done" >&2
  done
done
python3 "$repo/bench/warm_hit_floor_report.py" "$results" >/dev/null
