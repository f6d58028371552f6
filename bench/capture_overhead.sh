#!/usr/bin/env bash
# Where the default's remaining cold overhead at 1 / 10 KiB goes: wall and CPU of the app with
# no cache, with the default (helper), and with the helper binary missing (inputs recorded, nothing
# spawned); medians of 7, interleaved.
source "$(dirname "$0")/common.sh"
tool=$build/tools/jitcache
work=$(mktemp -d "${TMPDIR:-/tmp}/jitcache-overhead.XXXXXX"); chmod 700 "$work"; trap 'rm -rf "$work"' EXIT
"$repo/bench/gen_corpus.sh" "$work/corpus" 1024 10240 >/dev/null
export POCL_KERNEL_CACHE=0
out=$results/capture-overhead.csv; echo "size,variant,rep,wall_us,cpu_us" > $out
for size in 1024 10240; do
  for rep in 1 2 3 4 5 6 7; do
    for variant in nocache default nospawn build; do
      dir=$(mktemp -d -p $work); env_list=(POCL_CACHE_DIR=$(mktemp -d -p $work))
      case $variant in
        default) env_list+=(LD_PRELOAD=$shim JITCACHE_DIR=$dir/c JITCACHE_HELPER=$tool) ;;
        nospawn) env_list+=(LD_PRELOAD=$shim JITCACHE_DIR=$dir/c JITCACHE_HELPER=$work/none) ;;
        build) env_list+=(LD_PRELOAD=$shim JITCACHE_DIR=$dir/c JITCACHE_CAPTURE=build) ;;
      esac
      start=$(date +%s%N)
      env "${env_list[@]}" /usr/bin/time -f 'cpu %U %S' -o $work/cpu "$timer" --source "$work/corpus/k$size.cl" >/dev/null 2>&1
      us=$(( ($(date +%s%N) - start) / 1000 ))
      cpu=$(awk '/^cpu/ { printf "%d", ($2 + $3) * 1e6 }' $work/cpu)
      for lock in $dir/c/locks/*.lock; do [ -e "$lock" ] && flock "$lock" true; done
      echo "$size,$variant,$rep,$us,$cpu" >> $out
    done
  done
done
OUT=$out python3 - <<'PY'
import csv, statistics as st
import os; rows = list(csv.DictReader(open(os.environ['OUT'])))
for size in ('1024', '10240'):
    base = st.median(int(r['wall_us']) for r in rows if r['size'] == size and r['variant'] == 'nocache')
    cbase = st.median(int(r['cpu_us']) for r in rows if r['size'] == size and r['variant'] == 'nocache')
    for v in ('nocache', 'nospawn', 'default', 'build'):
        w = st.median(int(r['wall_us']) for r in rows if r['size'] == size and r['variant'] == v)
        c = st.median(int(r['cpu_us']) for r in rows if r['size'] == size and r['variant'] == v)
        print(f"{int(size)//1024} KiB {v:8s} wall {w/1000:8.1f} ms ({(w/base-1)*100:+.1f} %)  cpu {c/1000:8.1f} ms ({(c/cbase-1)*100:+.1f} %)")
PY
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
