#!/usr/bin/env bash
# Part 8 (issue 16): capture outside the app and `jitcache warm`, on PoCL with its cache off.
#  a) whole-process cold wall time, no cache / capture = build / the default (auto: the capture
#     helper on PoCL, one at a time while the app runs) / auto with helper_start = at_exit, at 1,
#     10 and 100 KiB (build_timer), the OpenCV UMat pipeline and a pyopencl script; variants
#     interleaved rep by rep; the helpers are waited for between runs (not timed: detached and
#     niced, the app has exited) by taking the build locks they hold, and whether they stored the
#     entries is checked; the app's own CPU time (user + sys, from /usr/bin/time) is kept too;
#  b) warm disk hit vs the floor (clCreateProgramWithBinary of the same binary), per size;
#  c) `jitcache warm -j 2` over 50 recorded programs after a simulated driver upgrade (the PoCL
#     library copied to a new prefix, OCL_ICD_VENDORS pointing at it), then those 50 builds again:
#     their verdicts.
#   BENCH_REPS=7  BENCH_SIZES="1024 10240 102400"  BENCH_WARM_PROGRAMS=50
#   BENCH_CASES="<sizes> opencv pyopencl" (part a)  BENCH_APPEND=1: keep the rows already in capture.csv
# Writes bench/results/capture.csv and capture.md.
source "$(dirname "$0")/common.sh"
ensure_built jitcache_tool
export POCL_KERNEL_CACHE=0
reps=${BENCH_REPS:-7}
sizes=${BENCH_SIZES:-1024 10240 102400}
programs=${BENCH_WARM_PROGRAMS:-50}
tool=$build/tools/jitcache
python=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/jitcache-capture.XXXXXX")
chmod 700 "$work"
trap 'rm -rf "$work"' EXIT
csv=$results/capture.csv
cases=${BENCH_CASES:-$sizes opencv pyopencl}
[ "${BENCH_APPEND:-0}" = 1 ] && [ -f "$csv" ] || echo "case,variant,rep,us,ok,cpu_us" > "$csv"
"$repo/bench/gen_corpus.sh" "$work/corpus" $sizes

fresh_pocl() { POCL_CACHE_DIR=$(mktemp -d -p "$work") env "$@"; }
# The detached helpers of the last run hold the build locks of the keys they capture (handed over
# by the app): taking each lock once tells they are done.
wait_for_helpers() {
  local lock
  for lock in "$1"/locks/*.lock; do [ -e "$lock" ] && flock "$lock" true 2>/dev/null; done
  return 0
}
entries_in() { find "$1" -name '*.entry' 2>/dev/null | wc -l; }

command_of() {
  case $1 in
    opencv) echo "$python $repo/tests/apps/opencv_umat_app.py" ;;
    pyopencl) echo "$python $repo/tests/integration/apps/pyopencl_kernels.py" ;;
    *) echo "$timer --source $work/corpus/k$1.cl" ;;
  esac
}

# run CASE VARIANT REP: one whole process, timed; ok = its output equals the no-cache run's, and
# for jitcache variants the entries are on disk once it (and its helpers) are done.
run_case() {
  local case=$1 variant=$2 rep=$3 dir="" env_list=(OPENCV_OPENCL_DEVICE=:CPU: OPENCV_OPENCL_CACHE_ENABLE=0 PYOPENCL_NO_CACHE=1 PYOPENCL_CTX=0)
  if [ "$variant" != nocache ]; then
    dir=$(fresh_cache_dir)
    env_list+=(LD_PRELOAD="$shim" JITCACHE_DIR="$dir" JITCACHE_HELPER="$tool")
    case $variant in
      build) env_list+=(JITCACHE_CAPTURE=build) ;;
      default) env_list+=(JITCACHE_CAPTURE=auto) ;;  # the column keeps its name: auto, one helper at a time
      at_exit) env_list+=(JITCACHE_CAPTURE=auto JITCACHE_HELPER_START=at_exit) ;;
    esac
  fi
  local start out ok=1
  start=$(date +%s%N)
  # shellcheck disable=SC2046  # the command is split on purpose
  out=$(cd "$work" && fresh_pocl "${env_list[@]}" /usr/bin/time -f 'cpu %U %S' -o "$work/cpu" $(command_of "$case") 2>/dev/null | grep -v '^[0-9]*$' || true)
  local us=$(( ($(date +%s%N) - start) / 1000 ))
  local cpu_us; cpu_us=$(awk '/^cpu/ { printf "%d", ($2 + $3) * 1e6 }' "$work/cpu")
  [ "$rep" = 1 ] && [ "$variant" = nocache ] && echo "$out" > "$work/$case.expected"
  [ "$out" = "$(cat "$work/$case.expected")" ] || ok=0
  if [ -n "$dir" ]; then
    wait_for_helpers "$dir"
    [ "$(entries_in "$dir")" -gt 0 ] || ok=0
    rm -rf "$dir"
  fi
  echo "$case,$variant,$rep,$us,$ok,$cpu_us" >> "$csv"
  echo "$case $variant rep $rep: $((us / 1000)) ms ok=$ok" >&2
}

# a) cold overhead
for case in $cases; do
  for rep in $(seq 1 "$reps"); do
    for variant in nocache build default at_exit; do run_case "$case" "$variant" "$rep"; done
  done
done

# b) warm hit vs floor
for size in $sizes; do
  source_file=$work/corpus/k$size.cl
  fresh_pocl "$timer" --source "$source_file" --dump-binary "$work/k$size.bin" >/dev/null
  warm_dir=$(fresh_cache_dir)
  fresh_pocl JITCACHE_DIR="$warm_dir" LD_PRELOAD="$shim" "$timer" --source "$source_file" >/dev/null
  wait_for_helpers "$warm_dir"
  for rep in $(seq 1 "$reps"); do
    echo "$size,floor,$rep,$(fresh_pocl "$timer" --binary "$work/k$size.bin" | head -1),1" >> "$csv"
    echo "$size,warm_disk,$rep,$(fresh_pocl JITCACHE_DIR="$warm_dir" LD_PRELOAD="$shim" "$timer" --source "$source_file" | head -1),1" >> "$csv"
  done
  rm -rf "$warm_dir"
done

# c) jitcache warm over recorded programs after a simulated upgrade
if [ "${BENCH_SKIP_WARM:-0}" != 1 ]; then
warm_dir=$(fresh_cache_dir)
for n in $(seq 1 "$programs"); do
  { echo "#define VARIANT $n"; cat "$work/corpus/k1024.cl"; } > "$work/p$n.cl"
  fresh_pocl JITCACHE_DIR="$warm_dir" LD_PRELOAD="$shim" "$timer" --source "$work/p$n.cl" >/dev/null
done
wait_for_helpers "$warm_dir"
prefix=$work/upgraded; lib=$prefix/lib/x86_64-linux-gnu
mkdir -p "$lib" "$prefix/share" "$work/vendors"
cp "$(readlink -f /usr/lib/x86_64-linux-gnu/libpocl.so.2)" "$lib/libpocl.so.2"
ln -s /usr/lib/x86_64-linux-gnu/pocl "$lib/pocl"
ln -s /usr/share/pocl "$prefix/share/pocl"
echo "$lib/libpocl.so.2" > "$work/vendors/pocl.icd"
start=$(date +%s%N)
fresh_pocl OCL_ICD_VENDORS="$work/vendors" JITCACHE_DIR="$warm_dir" "$tool" warm -j 2 --json > "$work/warm.json" || true
warm_us=$(( ($(date +%s%N) - start) / 1000 ))
built=$(python3 -c "import json,sys; print(json.load(open('$work/warm.json'))['built'])")
hits=0
for n in $(seq 1 "$programs"); do
  trace_dir=$work/traces-$n
  fresh_pocl OCL_ICD_VENDORS="$work/vendors" JITCACHE_DIR="$warm_dir" JITCACHE_TRACE=1 JITCACHE_TRACE_DIR="$trace_dir" \
    LD_PRELOAD="$shim" "$timer" --source "$work/p$n.cl" >/dev/null
  grep -q '"verdict": "hit"' "$trace_dir"/*.json && hits=$((hits + 1))
done
echo "warm$programs,jitcache_warm,1,$warm_us,$built" >> "$csv"
echo "warm$programs,hits_after,1,$hits,$programs" >> "$csv"
rm -rf "$warm_dir"
fi

cpu_median_of() { awk -F, -v c="$2" -v v="$3" '$1 == c && $2 == v { print $6 }' "$1" | median; }
{
  echo "Load average when part (a) ended: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| case | no cache | capture = build | its overhead | default (auto, one helper at a time) | its overhead | helper_start = at_exit | its overhead | app CPU: no cache / default | every run correct and stored |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for case in $(awk -F, 'NR > 1 && $2 == "nocache" { print $1 }' "$csv" | awk '!seen[$0]++'); do
    label=$case; [[ $case =~ ^[0-9]+$ ]] && label="$((case / 1024)) KiB source"
    n=$(median_of "$csv" "$case" nocache); b=$(median_of "$csv" "$case" build); h=$(median_of "$csv" "$case" default)
    e=$(median_of "$csv" "$case" at_exit)
    cn=$(cpu_median_of "$csv" "$case" nocache); ch=$(cpu_median_of "$csv" "$case" default)
    bad=$(awk -F, -v c="$case" '$1 == c && $5 != 1' "$csv" | wc -l)
    awk -v l="$label" -v n="$n" -v b="$b" -v h="$h" -v e="$e" -v cn="$cn" -v ch="$ch" -v bad="$bad" 'BEGIN {
      printf "| %s | %.2f s | %.2f s | %+.1f %% | %.2f s | %+.1f %% | %.2f s | %+.1f %% | %.2f / %.2f s | %s |\n", l, n / 1e6, b / 1e6, (b / n - 1) * 100, h / 1e6, (h / n - 1) * 100, e / 1e6, (e / n - 1) * 100, cn / 1e6, ch / 1e6, bad == 0 ? "yes" : bad " runs not"
    }'
  done
  echo
  echo "| source size | floor (binary from file) | warm disk hit (default settings) | warm / floor |"
  echo "|---:|---:|---:|---:|"
  for size in $sizes; do
    f=$(median_of "$csv" "$size" floor); w=$(median_of "$csv" "$size" warm_disk)
    awk -v s="$size" -v f="$f" -v w="$w" 'BEGIN { printf "| %d KiB | %.2f ms | %.2f ms | %.2f |\n", s / 1024, f / 1000, w / 1000, w / f }'
  done
  [ "${BENCH_SKIP_WARM:-0}" = 1 ] || echo
  [ "${BENCH_SKIP_WARM:-0}" = 1 ] || echo "\`jitcache warm -j 2\` over $programs recorded 1 KiB programs after a simulated driver upgrade:" \
       "$(awk -v u="$warm_us" 'BEGIN { printf "%.1f s", u / 1e6 }') wall, $built built;" \
       "then the same $programs builds under the upgraded driver: $hits of $programs hits."
} > "$results/capture.md"
echo "wrote $results/capture.md" >&2
