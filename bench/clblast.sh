#!/usr/bin/env bash
# Part 2: a real client, Debian's clblast-tests on PoCL. Wall time of each test program with
#   nocache     POCL_KERNEL_CACHE=0, no jitcache
#   pocl_cold   PoCL's kernel cache on, empty          pocl_warm   the same, filled
#   jc_cold     jitcache on an empty cache (PoCL cache off)   jc_warm   the same, filled
#   both_warm   PoCL's cache and jitcache, both filled
#   jc_release_cold, jc_release_warm: jitcache with capture = release (binary read at release)
# Every run must pass all its tests; a failing run is marked in the CSV and the table.
#   BENCH_CLBLAST_TESTS="xgemm xaxpy xdot xgemv"  BENCH_REPS=3 (warm variants)
#   BENCH_SUMMARY_ONLY=1: no runs, only the table and plot from an existing clblast.csv
# Writes bench/results/clblast.csv, clblast.md, clblast.png.
source "$(dirname "$0")/common.sh"
ensure_built
tests=${BENCH_CLBLAST_TESTS:-xgemm xaxpy xdot xgemv}
reps=${BENCH_REPS:-3}
csv=$results/clblast.csv
summary_only=${BENCH_SUMMARY_ONLY:-0}
if [ "$summary_only" = 1 ]; then
  tests=$(awk -F, 'NR > 1 { print $1 }' "$csv" | awk '!seen[$0]++')
else
  echo "test,variant,rep,ms,passed" > "$csv"
fi
log=$(mktemp)

# Runs with PoCL's cache off get an empty PoCL scratch dir each: PoCL unpacks a loaded binary into
# a folder named in the binary and deletes it only when the program is released, so folders left
# by an earlier process (holding the work-group code it generated) would speed up the next one.
scratch=$(mktemp -d)

# run TEST VARIANT REP [env assignments...]: one timed run of /usr/bin/clblast_test_TEST.
run() {
  local test=$1 variant=$2 rep=$3 start passed=1
  shift 3
  start=$(date +%s%N)
  env "POCL_CACHE_DIR=$(mktemp -d -p "$scratch")" "$@" "/usr/bin/clblast_test_$test" >"$log" 2>&1 || passed=0
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  grep -q "test(s) passed" "$log" || passed=0
  grep -Eq "[1-9][0-9]* test\(s\) failed" "$log" && passed=0
  echo "$test,$variant,$rep,$ms,$passed" >> "$csv"
  echo "$test $variant rep $rep: $ms ms passed=$passed" >&2
}

for test in $tests; do
  [ "$summary_only" = 1 ] && break
  pocl_dir=$(fresh_cache_dir); jc_dir=$(fresh_cache_dir); release_dir=$(fresh_cache_dir)
  pocl=(POCL_KERNEL_CACHE=1 "POCL_CACHE_DIR=$pocl_dir")
  jc=("JITCACHE_DIR=$jc_dir" "LD_PRELOAD=$shim")
  jc_release=("JITCACHE_DIR=$release_dir" JITCACHE_CAPTURE=release "LD_PRELOAD=$shim")
  run "$test" nocache 1 POCL_KERNEL_CACHE=0
  run "$test" pocl_cold 1 "${pocl[@]}"
  run "$test" jc_cold 1 POCL_KERNEL_CACHE=0 "${jc[@]}"
  run "$test" jc_release_cold 1 POCL_KERNEL_CACHE=0 "${jc_release[@]}"
  for rep in $(seq 1 "$reps"); do
    run "$test" pocl_warm "$rep" "${pocl[@]}"
    run "$test" jc_warm "$rep" POCL_KERNEL_CACHE=0 "${jc[@]}"
    run "$test" both_warm "$rep" "${pocl[@]}" "${jc[@]}"
    run "$test" jc_release_warm "$rep" POCL_KERNEL_CACHE=0 "${jc_release[@]}"
  done
  rm -rf "$pocl_dir" "$jc_dir" "$release_dir"
done
rm -rf "$log" "$scratch"

ms_of() { awk -F, -v t="$2" -v v="$3" '$1 == t && $2 == v { print $4 }' "$1" | median; }
all_passed() { awk -F, -v t="$1" 'NR > 1 && $1 == t && $5 != 1 { bad = 1 } END { print bad ? "**no**" : "yes" }' "$csv"; }
variants="nocache pocl_cold pocl_warm jc_cold jc_warm both_warm jc_release_cold jc_release_warm"
ratio() { awk -v a="$(ms_of "$csv" "$1" "$2")" -v b="$(ms_of "$csv" "$1" pocl_warm)" 'BEGIN { printf "%.2f", a / b }'; }
{
  echo "| test | no cache | PoCL cache cold | PoCL cache warm | jitcache cold | jitcache warm | both warm | jitcache cold, capture = release | jitcache warm, capture = release | jitcache warm / PoCL warm (build / release) | all tests passed |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for test in $tests; do
    row="| $test"
    for v in $variants; do row="$row | $(ms_of "$csv" "$test" "$v" | awk '{ printf "%.2f s", $1 / 1000 }')"; done
    echo "$row | $(ratio "$test" jc_warm) / $(ratio "$test" jc_release_warm) | $(all_passed "$test") |"
  done
} > "$results/clblast.md"
cat "$results/clblast.md"

dat=$(mktemp)
for test in $tests; do
  printf "%s" "$test"
  for v in $variants; do printf " %s" "$(ms_of "$csv" "$test" "$v" | awk '{ print $1 / 1000 }')"; done
  echo
done > "$dat"
gnuplot <<PLOT
set terminal pngcairo size 900,500 noenhanced
set output "$results/clblast.png"
set title "clblast-tests on PoCL: wall time per test program (median, log scale)"
set ylabel "s"
set logscale y
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key top right
plot "$dat" using 2:xtic(1) title "no cache", '' using 3 title "PoCL cache cold", '' using 4 title "PoCL cache warm", \
     '' using 5 title "jitcache cold", '' using 6 title "jitcache warm", '' using 7 title "both warm", \
     '' using 8 title "jitcache cold, capture = release", '' using 9 title "jitcache warm, capture = release"
PLOT
rm -f "$dat"
