#!/usr/bin/env bash
# Runs every CPU benchmark (parts 1, 2, 4, 5, 6, 7), then writes docs/benchmarks.md. The GPU part runs
# on a GPU machine: bench/gpu.sh (see docs/benchmarks.md, Part 3); its results are kept.
source "$(dirname "$0")/common.sh"
ensure_built
"$repo/bench/scale.sh"
"$repo/bench/many.sh"
"$repo/bench/micro.sh"
"$repo/bench/clblast.sh"
"$repo/bench/clients.sh"
"$repo/bench/pack.sh"
"$repo/bench/report.sh"
