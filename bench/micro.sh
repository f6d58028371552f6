#!/usr/bin/env bash
# Part 1: per-build micro benchmark on PoCL with PoCL's own cache off.
# For each corpus size: cold build without the shim, cold build with it (miss + store), warm disk
# hit (fresh process), memory hit (a second build of the same source in the same process), and the
# floor: clCreateProgramWithBinary + clBuildProgram of the same binary read from a file. Variants
# run interleaved, rep by rep, so machine noise hits all of them alike; the tables use medians.
#   BENCH_SIZES="1024 10240 102400 1048576"  BENCH_COLD_REPS=5  BENCH_WARM_REPS=11
# Writes bench/results/micro.csv, micro.md, micro.png.
source "$(dirname "$0")/common.sh"
ensure_built
export POCL_KERNEL_CACHE=0
sizes=${BENCH_SIZES:-1024 10240 102400 1048576}
cold_reps=${BENCH_COLD_REPS:-5}
warm_reps=${BENCH_WARM_REPS:-11}
corpus=$(mktemp -d)
# Every run gets an empty PoCL scratch dir: with its cache off PoCL unpacks a loaded binary into a
# folder named in the binary and deletes it at release, so a folder a previous process left behind
# (the cache's memory tier keeps its program until exit) would make the next load cheaper.
scratch=$(mktemp -d)
fresh_pocl() { POCL_CACHE_DIR=$(mktemp -d -p "$scratch") env "$@"; }
csv=$results/micro.csv
echo "size,variant,rep,us" > "$csv"
"$repo/bench/gen_corpus.sh" "$corpus" $sizes

for size in $sizes; do
  source_file=$corpus/k$size.cl
  warm_dir=""
  for rep in $(seq 1 "$cold_reps"); do
    dump=(); [ "$rep" = 1 ] && dump=(--dump-binary "$corpus/k$size.bin")
    start=$(date +%s%N)
    us=$(fresh_pocl "$timer" --source "$source_file" | head -1)
    echo "$size,cold,$rep,$us" >> "$csv"
    echo "$size,cold_process,$rep,$(( ($(date +%s%N) - start) / 1000 ))" >> "$csv"
    # The floor's binary, read as the cache reads it (not timed).
    [ "$rep" = 1 ] && fresh_pocl "$timer" --source "$source_file" "${dump[@]}" >/dev/null
    [ -n "$warm_dir" ] && rm -rf "$warm_dir"
    warm_dir=$(fresh_cache_dir)
    start=$(date +%s%N)
    us=$(fresh_pocl JITCACHE_DIR="$warm_dir" LD_PRELOAD="$shim" "$timer" --source "$source_file")
    echo "$size,cold_shim,$rep,$us" >> "$csv"
    # Whole process, exit included: the background binary read and store finish before exit.
    echo "$size,cold_shim_process,$rep,$(( ($(date +%s%N) - start) / 1000 ))" >> "$csv"
    # capture = release: the binary is read when the program is released (here: at exit).
    release_dir=$(fresh_cache_dir)
    start=$(date +%s%N)
    us=$(fresh_pocl JITCACHE_DIR="$release_dir" JITCACHE_CAPTURE=release LD_PRELOAD="$shim" "$timer" --source "$source_file")
    echo "$size,cold_release,$rep,$us" >> "$csv"
    echo "$size,cold_release_process,$rep,$(( ($(date +%s%N) - start) / 1000 ))" >> "$csv"
    rm -rf "$release_dir"
    echo "size $size cold rep $rep done" >&2
  done
  # The last cold_shim run left its entry in warm_dir.
  for rep in $(seq 1 "$warm_reps"); do
    us=$(fresh_pocl "$timer" --binary "$corpus/k$size.bin")
    echo "$size,floor,$rep,$us" >> "$csv"
    # Build 1 is the disk hit; builds 2-11 in the same context are memory hits (their median).
    times=$(fresh_pocl JITCACHE_DIR="$warm_dir" LD_PRELOAD="$shim" "$timer" --source "$source_file" --reps 11)
    echo "$size,warm_disk,$rep,$(sed -n 1p <<<"$times")" >> "$csv"
    echo "$size,memory,$rep,$(sed -n '2,$p' <<<"$times" | median)" >> "$csv"
  done
  # The counters say which tier served the second builds (hits_memory vs hits_disk).
  cp "$warm_dir/stats.json" "$results/micro-stats-$size.json" 2>/dev/null || true
  rm -rf "$warm_dir"
done
rm -rf "$corpus" "$scratch"

{
  echo "| source size | cold, no cache | cold with jitcache (miss + store) | miss overhead | cold, capture = release | its overhead | whole process: no cache / jitcache / capture = release | floor (binary from file) | warm disk hit | warm / floor | memory hit (later build in process) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for size in $sizes; do
    cold=$(median_of "$csv" "$size" cold); cold_shim=$(median_of "$csv" "$size" cold_shim)
    cold_release=$(median_of "$csv" "$size" cold_release)
    floor=$(median_of "$csv" "$size" floor); warm=$(median_of "$csv" "$size" warm_disk)
    memory=$(median_of "$csv" "$size" memory)
    cp=$(median_of "$csv" "$size" cold_process); csp=$(median_of "$csv" "$size" cold_shim_process)
    crp=$(median_of "$csv" "$size" cold_release_process)
    awk -v s="$size" -v c="$cold" -v cs="$cold_shim" -v cr="$cold_release" -v f="$floor" -v w="$warm" -v m="$memory" \
        -v cp="$cp" -v csp="$csp" -v crp="$crp" 'BEGIN {
      printf "| %d KiB | %.1f ms | %.1f ms | %+.1f %% | %.1f ms | %+.1f %% | %.2f s / %.2f s / %.2f s | %.2f ms | %.2f ms | %.2f | %.1f µs |\n",
             s / 1024, c / 1000, cs / 1000, (cs / c - 1) * 100, cr / 1000, (cr / c - 1) * 100, cp / 1e6, csp / 1e6, crp / 1e6,
             f / 1000, w / 1000, w / f, m }'
  done
} > "$results/micro.md"
cat "$results/micro.md"

# One row per size: medians in ms, for the plot.
for size in $sizes; do
  printf "%dKiB" $((size / 1024))
  for variant in cold cold_shim floor warm_disk memory; do
    printf " %s" "$(median_of "$csv" "$size" "$variant" | awk '{ print $1 / 1000 }')"
  done
  echo
done > "$results/micro.dat"
gnuplot <<PLOT
set terminal pngcairo size 900,500 noenhanced
set output "$results/micro.png"
set title "jitcache on PoCL: build time per program (median, log scale)"
set ylabel "ms"
set logscale y
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key top left
plot "$results/micro.dat" using 2:xtic(1) title "cold, no cache", '' using 3 title "cold with jitcache", \
     '' using 4 title "floor: binary from file", '' using 5 title "jitcache warm disk hit", \
     '' using 6 title "memory hit (later build in process)"
PLOT
rm -f "$results/micro.dat"
