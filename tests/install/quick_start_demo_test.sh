#!/usr/bin/env bash
# README's quick start as a newcomer meets it on a busy machine: the demo of its first command
# (scripts/demo.sh on this build tree; the suite installs and builds on its own) beside two
# CPU-bound loops. Run 2 must be served from the cache entirely, and the lines a newcomer reads
# must say what happened. Also: README names that command word for word, and install-deps.sh's
# lean set holds none of the test suite's packages (they come with --tests, README's test command).
# Usage: quick_start_demo_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source=$1 build=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

# README's two commands, word for word, and the test command installs the test packages.
grep -qxF 'scripts/install-deps.sh && scripts/build.sh && scripts/demo.sh' "$source/README.md" ||
  fail "README's quick start no longer runs scripts/install-deps.sh && scripts/build.sh && scripts/demo.sh"
grep -qxF 'scripts/test.sh' "$source/README.md" || fail "README's test command is no longer scripts/test.sh"
grep -qxF 'scripts/install-deps.sh --tests' "$source/scripts/test.sh" ||
  fail "scripts/test.sh does not install the test suite's packages"

lean=$("$source/scripts/install-deps.sh" --list)
all=$("$source/scripts/install-deps.sh" --tests --list)
for package in libgtest-dev googletest lintian clblast-tests mesa-opencl-icd python3-pyopencl python3-opencv hashcat \
               redis-server nginx-core libarchive-dev gnuplot-nox g++-mingw-w64-x86-64 wine64 clang libclang-rt-14-dev; do
  ! grep -qxF "$package" <<<"$lean" || fail "the lean install set holds the test package $package"
  grep -qxF "$package" <<<"$all" || fail "install-deps.sh --tests lacks $package"
done
for package in cmake pocl-opencl-icd ocl-icd-opencl-dev libze-dev libhiredis-dev libcurl4-openssl-dev libssl-dev; do
  grep -qxF "$package" <<<"$lean" || fail "the lean install set lacks $package"
done

# Two CPU-bound loops, as many as this machine's CI has cores; bounded by the test's own timeout.
loops=()
for _ in 1 2; do
  timeout 600 sh -c 'while :; do :; done' &
  loops+=($!)
done
tmp=$(mktemp -d /tmp/jitcache-quick-start-XXXXXX)  # the demo's cache goes in here
trap 'kill "${loops[@]}" 2>/dev/null || true; rm -rf "$tmp"' EXIT

status=0
output=$(BUILD_DIR="$build" TMPDIR="$tmp" "$source/scripts/demo.sh" 2>&1) || status=$?
[ "$status" = 0 ] || { echo "$output"; fail "scripts/demo.sh exited $status"; }
echo "$output"
expect() { grep -qE "$1" <<<"$output" || fail "the demo's output lacks a line like: $1"; }
[ "$(grep -cxF 'all results correct' <<<"$output")" = 2 ] || fail "both runs must compute correct results"
# Between the runs: what `jitcache wait` waits for and what came of it (or nothing left to wait for).
if grep -q '^waiting for ' <<<"$output"; then
  expect '^waiting for ([0-9]+) captures? \(programs an app built, stored by its capture helper\): [0-9a-f]{8} built in '
  expect '^stored ([0-9]+) of \1 in [0-9.]+ (ms|s|min): [0-9a-f]{8} \((vector_add|square_plus_offset)'
fi
expect '^settled: no capture in flight in '
# The summary: two misses in run 1, both captured; run 2 all hits, with its build times.
expect '^run 1: 2 programs compiled \(misses\): vector_math [0-9.]+ ms, integer_ops [0-9.]+ ms; the capture helper stored 2 \(captured\)$'
expect '^run 2: 2 of 2 programs served from the cache \(hits\): vector_math [0-9.]+ ms, integer_ops [0-9.]+ ms$'
! grep -q '^run 2 built [0-9a-f]* itself' <<<"$output" || fail "run 2 built a program itself"
echo "PASS"
