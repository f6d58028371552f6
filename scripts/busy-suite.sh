#!/usr/bin/env bash
# README's test command beside BUSY CPU-bound loops (default 4), each in a session of its own
# (an autogroup, as other users' work is), for as long as the suite runs; prints its wall time.
# Build first (scripts/build.sh --all) for a run whose time is the tests': beside four loops on
# two cores the Windows cross-build alone takes half an hour. docs/concurrency.md, "Any load".
#   BUSY=4 scripts/busy-suite.sh
set -uo pipefail
cd "$(dirname "$0")/.."
loops=()
for _ in $(seq "${BUSY:-4}"); do setsid sh -c 'while :; do :; done' & loops+=($!); done
trap 'kill "${loops[@]}" 2>/dev/null' EXIT
start=$(date +%s)
echo "start $(date -u +%FT%TZ) $(git log --oneline -1 2>/dev/null), ${BUSY:-4} loops"
scripts/test.sh
status=$?
echo "scripts/test.sh exit $status, $(( $(date +%s) - start )) s wall"
exit "$status"
