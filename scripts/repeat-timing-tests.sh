#!/usr/bin/env bash
# Repeats the timing-sensitive test groups (capture helper, key completeness, warm replay): run it
# after touching capture, locks, traces or the exit flush, ideally while the machine is busy (another
# build), as issue 31 asks. Each test runs until it fails or REPEAT times (default 20).
#   scripts/repeat-timing-tests.sh [REPEAT] [extra ctest arguments...]   (-R REGEX: those tests instead)
# BUSY=N starts N CPU-bound loops, each in a session of its own (as bench/ does with BENCH_BUSY),
# for as long as the tests run: issue 38 asks for `BUSY=2 scripts/repeat-timing-tests.sh 20`, twice.
# Needs a full build (scripts/build.sh --all). docs/concurrency.md names what each test waits on.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-20}
shift || true
loops=()
trap '[ ${#loops[@]} -eq 0 ] || kill "${loops[@]}" 2>/dev/null' EXIT
for _ in $(seq "${BUSY:-0}"); do setsid sh -c 'while :; do :; done' & loops+=($!); done
# `-R REGEX` among the extra arguments picks other tests instead of these groups.
select=(-R 'CaptureHelper|KeyCompleteness|WarmReplay')
for argument in "$@"; do [ "$argument" != -R ] || select=(); done
ctest --test-dir "${BUILD_DIR:-build}" ${select[@]+"${select[@]}"} -j"$(nproc)" \
  --repeat until-fail:"$repeat" --output-on-failure "$@"
