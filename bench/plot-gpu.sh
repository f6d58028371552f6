#!/usr/bin/env bash
# Plots gpu.dat (written by bench/gpu.sh, medians in ms) into gpu.png; run where gnuplot exists.
set -euo pipefail
dir=${1:-$(dirname "$0")/results}
gnuplot <<PLOT
set terminal pngcairo size 900,500 noenhanced
set output "$dir/gpu.png"
set title "jitcache on NVIDIA OpenCL ($(cut -d, -f1 "$dir/gpu-device.txt")): build time per program (median, log scale)"
set ylabel "ms"
set logscale y
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set key top left
plot "$dir/gpu.dat" using 2:xtic(1) title "cold, no cache", '' using 3 title "cold with jitcache", \
     '' using 4 title "floor: PTX from file", '' using 5 title "ComputeCache warm", \
     '' using 6 title "jitcache warm", '' using 7 title "both warm"
PLOT
