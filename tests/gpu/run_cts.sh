#!/usr/bin/env bash
# Run the Khronos OpenCL-CTS test_api / test_compiler without and under jitcache and compare every
# test's outcome across the modes. Built for a GPU machine without compilers: needs bash 4, coreutils
# (timeout, stat), grep, sed, awk, tar, gzip; the CTS carry folder comes from tests/gpu/build_cts.sh.
#
# Usage (from the repository root):
#   tests/gpu/run_cts.sh [CTS_DIR [JITCACHE_LIB [OUTPUT_DIR]]]
#
# Settings (environment):
#   CTS_DIR            carry folder with test_api, test_compiler, cl_platforms (default gpu-build/cts)
#   JITCACHE_LIB       the jitcache library (default build/shim/libjitcache.so, else the stripped
#                      copy gpu-build/jitcache/shim/libjitcache.so from tests/gpu/stage_jitcache.sh)
#   JITCACHE_TOOL      the jitcache tool, used as the capture helper (JITCACHE_HELPER), for
#                      `jitcache wait` after a jitcache mode and `jitcache stats`
#                      (default: <lib dir>/../tools/jitcache, when it exists)
#   CTS_OUT            output folder (default $OUT, else a new temporary folder); gets at most 8
#                      files: summary.txt, logs.tar.gz and the outcomes-<binary>-<mode>.txt of this call
#   CTS_ICD            the driver library (default libnvidia-opencl.so.1); an .icd folder naming it is
#                      written and OCL_ICD_VENDORS / OCL_ICD_FILENAMES point at it only (so another driver
#                      listed by the caller's OCL_ICD_FILENAMES, e.g. PoCL, is not loaded).
#                      Local test: CTS_ICD=libpocl.so.2
#   CTS_PLATFORM       the only platform name accepted (default: "NVIDIA CUDA" for an NVIDIA ICD,
#                      "Portable Computing Language" for PoCL, else any name); the run is refused
#                      unless exactly one platform with a device is listed. CTS_PLATFORM_CHECK=0 skips.
#   CTS_LOADER         auto (default: the system libOpenCL.so.1, else the one in CTS_DIR/lib),
#                      system, or carried
#   CTS_BINARIES       default "test_api test_compiler"
#   CTS_MODES          default "plain cold warm layer-warm"; known modes:
#                        plain       no jitcache
#                        cold        LD_PRELOAD=lib, JITCACHE_DIR a fresh empty folder, JITCACHE_TRACE=1
#                        warm        LD_PRELOAD=lib, the same JITCACHE_DIR again
#                        layer-warm  OPENCL_LAYERS=lib instead of LD_PRELOAD, the same JITCACHE_DIR
#                        layer-cold  OPENCL_LAYERS=lib with a fresh JITCACHE_DIR
#                      warm modes need the cold run of the same binary in the same CTS_STATE (an earlier
#                      call on the same machine is fine).
#   CTS_SKIP           tests not run (default: negative_create_context
#                      negative_enqueue_marker_with_wait_list, which crash / hang NVIDIA's driver);
#                      shell patterns allowed; outcome "skipped"
#   CTS_TESTS          run only these tests (names or shell patterns; default all)
#   CTS_BUDGET         seconds this call may take in all (default 540); tests not started in time are
#                      "not run" (the summary says so, exit status 2)
#   CTS_RESUME         1: where an outcomes file of a binary/mode exists in CTS_STATE, run only its
#                      tests marked "not run" (budget used up) and merge (a resumed cold run keeps its cache)
#   CTS_CHUNK_TIMEOUT  seconds one CTS process may run (default 0: what is left of CTS_BUDGET)
#   CTS_IDLE_TIMEOUT   seconds without any output after which a CTS process counts as hung (default 180;
#                      test_api's repeated_setup_cleanup prints nothing for ~40 s on NVIDIA); 0 = off
#   CTS_WAIT           seconds `jitcache wait` may wait for capture helpers after a jitcache mode (120)
#   CTS_STATE          folder kept between calls: caches, traces, outcomes (default gpu-build/cts-run)
#   CTS_FRESH          1: empty CTS_STATE first
#   CTS_JITCACHE_ENV   extra VAR=value words for the jitcache modes (e.g. "JITCACHE_CAPTURE=build")
#
# Outcomes per test: passed, FAILED, not supported, crashed, hung, skipped, not run. A process that
# crashes or hangs marks the test it was running and the run resumes with the tests after it. The
# row "@process-exit" records a crash or hang that no test can be blamed for (ok / crashed / hung), so a
# crash at exit (after the last test) shows too.
#
# Exit status: 0 every test has the same outcome in every mode as in plain; 1 some differ;
# 2 setup error or incomplete (no plain outcomes to compare with, tests not run, jitcache did not
# trace anything in a jitcache mode).
set -uo pipefail

START=$SECONDS
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CTS_DIR=${1:-${CTS_DIR:-$ROOT/gpu-build/cts}}
JITCACHE_LIB=${2:-${JITCACHE_LIB:-$ROOT/build/shim/libjitcache.so}}
# The stripped copy tests/gpu/stage_jitcache.sh makes, when the build tree was not carried.
if [ -z "${2:-}" ] && [ ! -f "$JITCACHE_LIB" ] && [ -f "$ROOT/gpu-build/jitcache/shim/libjitcache.so" ]; then
    JITCACHE_LIB=$ROOT/gpu-build/jitcache/shim/libjitcache.so
fi
CTS_OUT=${3:-${CTS_OUT:-${OUT:-}}}
CTS_ICD=${CTS_ICD:-libnvidia-opencl.so.1}
CTS_LOADER=${CTS_LOADER:-auto}
CTS_BINARIES=${CTS_BINARIES:-test_api test_compiler}
CTS_MODES=${CTS_MODES:-plain cold warm layer-warm}
CTS_SKIP=${CTS_SKIP-negative_create_context negative_enqueue_marker_with_wait_list}
CTS_TESTS=${CTS_TESTS:-}
CTS_BUDGET=${CTS_BUDGET:-540}
CTS_RESUME=${CTS_RESUME:-0}
CTS_CHUNK_TIMEOUT=${CTS_CHUNK_TIMEOUT:-0}
CTS_IDLE_TIMEOUT=${CTS_IDLE_TIMEOUT:-180}
CTS_WAIT=${CTS_WAIT:-120}
CTS_STATE=${CTS_STATE:-$ROOT/gpu-build/cts-run}
CTS_JITCACHE_ENV=${CTS_JITCACHE_ENV:-}
CTS_PLATFORM_CHECK=${CTS_PLATFORM_CHECK:-1}
if [ -z "${CTS_PLATFORM+x}" ]; then
    case "$CTS_ICD" in
        *nvidia*) CTS_PLATFORM="NVIDIA CUDA" ;;
        *pocl*) CTS_PLATFORM="Portable Computing Language" ;;
        *) CTS_PLATFORM="" ;;
    esac
fi
# Commas work as separators too.
CTS_BINARIES=${CTS_BINARIES//,/ }
CTS_MODES=${CTS_MODES//,/ }
CTS_SKIP=${CTS_SKIP//,/ }
CTS_TESTS=${CTS_TESTS//,/ }

log() { printf '[run_cts %3ds] %s\n' "$((SECONDS - START))" "$*" >&2; }
abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac; }

CTS_DIR=$(abspath "$CTS_DIR")
JITCACHE_LIB=$(abspath "$JITCACHE_LIB")
CTS_STATE=$(abspath "$CTS_STATE")
if [ -z "${JITCACHE_TOOL:-}" ]; then
    JITCACHE_TOOL=$(dirname "$JITCACHE_LIB")/../tools/jitcache
fi
JITCACHE_TOOL=$(abspath "$JITCACHE_TOOL")
if [ -x "$JITCACHE_TOOL" ]; then
    JITCACHE_TOOL=$(cd "$(dirname "$JITCACHE_TOOL")" && pwd)/$(basename "$JITCACHE_TOOL")
else
    JITCACHE_TOOL=""
fi
if [ -z "$CTS_OUT" ]; then
    CTS_OUT=$(mktemp -d "${TMPDIR:-/tmp}/cts-out.XXXXXX")
fi
mkdir -p "$CTS_OUT"
CTS_OUT=$(cd "$CTS_OUT" && pwd)

[ "${CTS_FRESH:-0}" = 1 ] && rm -rf "$CTS_STATE"
mkdir -p "$CTS_STATE/outcomes" "$CTS_STATE/traces-counts"
# This call's logs and notes; tarred into $CTS_OUT/logs.tar.gz at the end.
CALL=$CTS_STATE/call
rm -rf "$CALL"
mkdir -p "$CALL/logs"
NOTES=$CALL/notes.txt
: >"$NOTES"
note() { printf '%s\n' "$*" >>"$NOTES"; log "$*"; }

SETUP_ERROR=0
INCOMPLETE=0

finish() { # write summary.txt, the tarball and the outcome files; exit
    local status=$1
    {
        echo "# run_cts summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), $((SECONDS - START)) s)"
        echo "icd: $CTS_ICD  loader: ${LOADER_DESC:-?}  platform: ${PLATFORM_DESC:-?}"
        echo "device: ${DEVICE_DESC:-?}"
        echo "cts: $CTS_DIR ($(grep -m1 '^source: OpenCL-CTS' "$CTS_DIR/BUILD-INFO.txt" 2>/dev/null | cut -d' ' -f3 | cut -c1-12))"
        echo "jitcache: $JITCACHE_LIB ${JITCACHE_DESC:-}"
        echo "binaries: $CTS_BINARIES  modes: $CTS_MODES  skip: ${CTS_SKIP:-none}  only: ${CTS_TESTS:-all}"
        if [ -s "$NOTES" ]; then
            echo "notes:"
            sed 's/^/  /' "$NOTES"
        fi
        [ -f "$CALL/compare.txt" ] && cat "$CALL/compare.txt"
    } >"$CTS_OUT/summary.txt"
    # Logs of this call plus every outcome and trace count kept in the state.
    cp -r "$CTS_STATE/outcomes" "$CTS_STATE/traces-counts" "$CALL/" 2>/dev/null
    cp "$CTS_OUT/summary.txt" "$CALL/"
    [ -f "$CTS_DIR/BUILD-INFO.txt" ] && cp "$CTS_DIR/BUILD-INFO.txt" "$CALL/"
    tar -czf "$CTS_OUT/logs.tar.gz" -C "$CTS_STATE" call 2>/dev/null ||
        log "could not write $CTS_OUT/logs.tar.gz"
    # The outcome files of this call, as long as $OUT stays within 8 files.
    local files=() f
    for f in "${CALL_OUTCOMES[@]}"; do files+=("$f"); done
    if [ "${#files[@]}" -le 6 ]; then
        for f in "${files[@]}"; do cp "$CTS_STATE/outcomes/$f" "$CTS_OUT/"; done
    else
        echo "(${#files[@]} outcome files: only in logs.tar.gz, call/outcomes/, to keep \$OUT at 8 files)" >>"$CTS_OUT/summary.txt"
    fi
    tail -n 1 "$CTS_OUT/summary.txt" >&2
    log "output in $CTS_OUT: $(cd "$CTS_OUT" && ls | tr '\n' ' ')"
    exit "$status"
}
CALL_OUTCOMES=()

# ---------------------------------------------------------------------------------------------------
# Checks of the carry folder and the jitcache library.
for b in $CTS_BINARIES; do
    case "$b" in test_api | test_compiler) ;; *) note "unknown binary $b (test_api or test_compiler)"; finish 2 ;; esac
    [ -x "$CTS_DIR/$b" ] || { note "missing $CTS_DIR/$b (build it with tests/gpu/build_cts.sh)"; finish 2; }
done
needs_jitcache=0
for m in $CTS_MODES; do
    case "$m" in
        plain) ;;
        cold | warm | layer-warm | layer-cold) needs_jitcache=1 ;;
        *) note "unknown mode $m"; finish 2 ;;
    esac
done
if [ "$needs_jitcache" = 1 ]; then
    if [ ! -f "$JITCACHE_LIB" ]; then
        note "missing jitcache library $JITCACHE_LIB"
        finish 2
    fi
    JITCACHE_DESC="($(stat -c '%s bytes, %y' "$JITCACHE_LIB" | cut -d. -f1))"
    missing=$(ldd "$JITCACHE_LIB" 2>&1 | grep 'not found' | awk '{print $1}' | tr '\n' ' ')
    if [ -n "$missing" ]; then
        note "jitcache library needs libraries this machine lacks: $missing"
        finish 2
    fi
    if [ -n "$JITCACHE_TOOL" ]; then
        missing=$(ldd "$JITCACHE_TOOL" 2>&1 | grep 'not found' | awk '{print $1}' | tr '\n' ' ')
        if [ -n "$missing" ]; then
            note "jitcache tool $JITCACHE_TOOL cannot run here (lacks $missing): no capture helper, no 'jitcache wait'"
            JITCACHE_TOOL=""
        fi
    fi
    [ -n "$JITCACHE_TOOL" ] && JITCACHE_DESC="$JITCACHE_DESC tool: $JITCACHE_TOOL" ||
        note "no jitcache tool beside the library: no capture helper (JITCACHE_HELPER unset), no 'jitcache wait'"
fi

# ---------------------------------------------------------------------------------------------------
# Driver selection and platform check.
unset LD_PRELOAD OPENCL_LAYERS CL_CONFORMANCE_RESULTS_FILENAME
for v in $(compgen -e | grep -E '^JITCACHE_|^BinaryCacheTrace$'); do
    [ "$v" = JITCACHE_LIB ] || [ "$v" = JITCACHE_TOOL ] || unset "$v"
done
ICD_DIR=$CTS_STATE/icd
rm -rf "$ICD_DIR" "$CTS_STATE/icd-empty"
mkdir -p "$ICD_DIR" "$CTS_STATE/icd-empty"
printf '%s\n' "$CTS_ICD" >"$ICD_DIR/cts.icd"

LOADER_ENV=()
case "$CTS_LOADER" in
    carried) LOADER_ENV=("LD_LIBRARY_PATH=$CTS_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}") ;;
    system) ;;
    auto)
        if ! ldd "$CTS_DIR/${CTS_BINARIES%% *}" 2>/dev/null | grep -q 'libOpenCL.so.1 => /'; then
            LOADER_ENV=("LD_LIBRARY_PATH=$CTS_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
        fi
        ;;
    *) note "CTS_LOADER must be auto, system or carried"; finish 2 ;;
esac
if [ "${#LOADER_ENV[@]}" -gt 0 ]; then
    LOADER_DESC="carried $CTS_DIR/lib/libOpenCL.so.1"
else
    LOADER_DESC="system $(ldd "$CTS_DIR/${CTS_BINARIES%% *}" 2>/dev/null | awk '/libOpenCL.so.1/ {print $3}')"
fi

# Candidate settings, first one giving exactly the expected platform wins: the ocl-icd loader adds
# OCL_ICD_FILENAMES to the vendors folder (listing the driver once); the Khronos loader may list a
# driver named in both twice, so the other two are tried after it.
ICD_CANDIDATES=(
    "OCL_ICD_VENDORS=$ICD_DIR OCL_ICD_FILENAMES=$CTS_ICD"
    "OCL_ICD_VENDORS=$ICD_DIR OCL_ICD_FILENAMES="
    "OCL_ICD_VENDORS=$CTS_STATE/icd-empty OCL_ICD_FILENAMES=$CTS_ICD"
)
ICD_ENV=()
platform_ok() { # $1: cl_platforms output file; sets PLATFORM_DESC, DEVICE_DESC
    local n name devs
    n=$(grep -c '^platform	' "$1")
    [ "$n" = 1 ] || return 1
    name=$(awk -F'\t' '$1 == "platform" {print $3}' "$1")
    devs=$(awk -F'\t' '$1 == "platform" {print $5}' "$1")
    [ "${devs:-0}" -ge 1 ] 2>/dev/null || return 1
    if [ -n "$CTS_PLATFORM" ] && [ "$name" != "$CTS_PLATFORM" ]; then return 1; fi
    PLATFORM_DESC="$name, $(awk -F'\t' '$1 == "platform" {print $4}' "$1")"
    DEVICE_DESC=$(awk -F'\t' '$1 == "device" {print $3 " (" $4 ", driver " $5 ")"}' "$1" | head -1)
    return 0
}
if [ "$CTS_PLATFORM_CHECK" = 0 ]; then
    ICD_ENV=(OCL_ICD_VENDORS="$ICD_DIR" OCL_ICD_FILENAMES="$CTS_ICD")
    note "platform check skipped (CTS_PLATFORM_CHECK=0)"
elif [ -x "$CTS_DIR/cl_platforms" ] || command -v clinfo >/dev/null; then
    i=0
    for cand in "${ICD_CANDIDATES[@]}"; do
        i=$((i + 1))
        read -r -a cenv <<<"$cand"
        out=$CALL/logs/platforms-$i.txt
        if [ -x "$CTS_DIR/cl_platforms" ]; then
            timeout 120 env "${LOADER_ENV[@]}" "${cenv[@]}" "$CTS_DIR/cl_platforms" >"$out" 2>&1
        else # clinfo -l: "Platform #0: NAME" / " `-- Device #0: NAME"
            timeout 120 env "${LOADER_ENV[@]}" "${cenv[@]}" clinfo -l 2>&1 |
                awk '/^Platform #/ {sub(/^Platform #[0-9]+: /, ""); n++; name[n]=$0; d[n]=0; next}
                     /Device #/ {d[n]++; sub(/^.*Device #[0-9]+: /, ""); dev[n]=$0}
                     END {for (k = 1; k <= n; k++) print "platform\t" (k-1) "\t" name[k] "\t?\t" d[k];
                          for (k = 1; k <= n; k++) if (d[k]) print "device\t" (k-1) ".0\t" dev[k] "\t?\t?"}' >"$out"
        fi
        echo "# $cand" >>"$out"
        if platform_ok "$out"; then
            ICD_ENV=("${cenv[@]}")
            break
        fi
    done
    if [ "${#ICD_ENV[@]}" = 0 ]; then
        note "platform check failed: expected exactly one platform${CTS_PLATFORM:+ named '$CTS_PLATFORM'} with a device; saw:"
        for f in "$CALL"/logs/platforms-*.txt; do sed 's/^/    /' "$f" >>"$NOTES"; done
        finish 2
    fi
    log "platform: $PLATFORM_DESC; device: $DEVICE_DESC; with ${ICD_ENV[*]}"
else
    ICD_ENV=(OCL_ICD_VENDORS="$ICD_DIR" OCL_ICD_FILENAMES="$CTS_ICD")
    note "platform check skipped: neither $CTS_DIR/cl_platforms nor clinfo is here"
fi
BASE_ENV=("${LOADER_ENV[@]}" "${ICD_ENV[@]}")

# ---------------------------------------------------------------------------------------------------
# Log parsing: prints S<TAB>test (test started, in order), O<TAB>test<TAB>outcome, E<TAB>test<TAB>why
# (the harness refused a name), X<TAB>summary (the harness printed its final counts).
parse_log() { # $1 names file, $2 log
    awk -F'\n' '
        NR == FNR { want[$0] = 1; next }
        {
            line = $0; sub(/\r$/, "", line)
            if (line ~ /\.\.\.$/) { t = substr(line, 1, length(line) - 3); if (t in want) { print "S\t" t; next } }
            if (line ~ / passed$/) { t = substr(line, 1, length(line) - 7); if (t in want) { print "O\t" t "\tpassed"; next } }
            if (line ~ / FAILED$/) { t = substr(line, 1, length(line) - 7); if (t in want) { print "O\t" t "\tFAILED"; next } }
            if (line ~ / test not supported$/) { t = substr(line, 1, length(line) - 19); if (t in want) { print "O\t" t "\tnot supported"; next } }
            if (line ~ / test currently not implemented$/) { t = substr(line, 1, length(line) - 31); if (t in want) { print "O\t" t "\tnot supported"; next } }
            if (line ~ / skipped \(requires at least /) { t = line; sub(/ skipped \(requires at least .*$/, "", t); if (t in want) { print "O\t" t "\tnot supported"; next } }
            if (line ~ /^Subtest .* tests is not supported in offline compiler/) { t = line; sub(/^Subtest /, "", t); sub(/ tests is not supported in offline compiler.*$/, "", t); if (t in want) { print "O\t" t "\tnot supported"; next } }
            if (line ~ /^ERROR: Test .* is missing implementation\.$/) { t = line; sub(/^ERROR: Test ./, "", t); sub(/. is missing implementation\.$/, "", t); print "E\t" t "\tnot supported"; next }
            if (line ~ /^ERROR: The argument .* did not match any test names\.$/) { t = line; sub(/^ERROR: The argument ./, "", t); sub(/. did not match any test names\.$/, "", t); print "E\t" t "\tunknown test"; next }
            if (line ~ /^(PASSED|FAILED|SKIPPED) ([0-9]+ of [0-9]+ tests|test)\.$/) { print "X\tsummary"; next }
        }' "$1" "$2"
}

matches_any() { # $1 name, rest: patterns
    local n=$1 p
    shift
    for p in "$@"; do
        # shellcheck disable=SC2053
        [[ $n == $p ]] && return 0
    done
    return 1
}

# Runs one CTS process in the background and watches its output; sets CHUNK_RC and CHUNK_HOW
# (exited, hung: no output for CTS_IDLE_TIMEOUT, timeout: ran past its time limit).
run_chunk() { # $1 log, $2 json, $3 time limit, rest: test names
    local logf=$1 json=$2 limit=$3 pid last=-1 since size cstart=$SECONDS
    shift 3
    rm -f "$json"
    (cd "$CTS_DIR" && exec timeout -k 15 "$limit" env "${MODE_ENV[@]}" CL_CONFORMANCE_RESULTS_FILENAME="$json" "./$BIN" "$@") \
        >"$logf" 2>&1 </dev/null &
    pid=$!
    # bash reports a background job killed by a signal on its own stderr ("Segmentation fault"):
    # the chunk's log says it already, so hide that until the job is reaped.
    exec 4>&2 2>/dev/null
    since=$SECONDS
    CHUNK_HOW=exited
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        size=$(stat -c %s "$logf" 2>/dev/null || echo 0)
        if [ "$size" != "$last" ]; then
            last=$size
            since=$SECONDS
        elif [ "$CTS_IDLE_TIMEOUT" -gt 0 ] && [ $((SECONDS - since)) -ge "$CTS_IDLE_TIMEOUT" ]; then
            CHUNK_HOW=hung
            kill -TERM "$pid" 2>/dev/null # timeout passes it on to the CTS, and KILLs it 15 s later
            break
        fi
    done
    wait "$pid"
    CHUNK_RC=$?
    exec 2>&4 4>&-
    if [ "$CHUNK_HOW" = exited ] && { [ "$CHUNK_RC" = 124 ] || [ "$CHUNK_RC" = 137 ]; }; then
        CHUNK_HOW=timeout
    fi
    printf '\n[run_cts] exit status %s (%s) after %s s\n' "$CHUNK_RC" "$CHUNK_HOW" "$((SECONDS - cstart))" >>"$logf"
}

count_traces() { # $1 trace folder, $2 counts file
    local dir=$1 out=$2 n
    n=$(find "$dir" -maxdepth 1 -name '*.json' 2>/dev/null | wc -l)
    {
        echo "files $n"
        if [ "$n" -gt 0 ]; then
            find "$dir" -maxdepth 1 -name '*.json' -print0 | xargs -0 cat 2>/dev/null |
                grep -o '"verdict"[[:space:]]*:[[:space:]]*"[a-z_]*"' | sed 's/.*"\([a-z_]*\)"$/\1/' |
                sort | uniq -c | awk '{print $2, $1}'
        fi
    } >"$out"
}

# ---------------------------------------------------------------------------------------------------
# One binary in one mode.
run_mode() { # $1 binary, $2 mode
    BIN=$1
    local mode=$2 t i
    local tag=$BIN-$mode
    local ldir=$CALL/logs/$tag
    local outf=$CTS_STATE/outcomes/outcomes-$tag.txt
    local cache=$CTS_STATE/$BIN/cache traces=$CTS_STATE/$BIN/traces-$mode
    local mstart=$SECONDS
    [ "$CTS_RESUME" = 1 ] || rm -rf "$ldir"
    mkdir -p "$ldir"
    local resume=0 prev_wall=0
    if [ "$CTS_RESUME" = 1 ] && [ -f "$outf" ]; then
        resume=1
        prev_wall=$(cat "$CTS_STATE/outcomes/.wall-$tag" 2>/dev/null || echo 0)
        log "$tag: resuming: only the tests 'not run' in $outf"
    else
        rm -f "$outf" "$CTS_STATE/traces-counts/traces-$tag.txt"
    fi

    MODE_ENV=("${BASE_ENV[@]}")
    case "$mode" in
        cold | layer-cold)
            if [ "$resume" = 1 ] && [ -d "$cache" ]; then
                : # keep the cache the first part of this cold run filled
            else
            rm -rf "${CTS_STATE:?}/${BIN:?}"
            mkdir -p "$CTS_STATE/$BIN"
            mkdir -m 700 "$cache"
            # Results of the jitcache modes that used the old cache no longer hold.
            rm -f "$CTS_STATE"/outcomes/outcomes-"$BIN"-{cold,warm,layer-warm,layer-cold}.txt
            rm -f "$CTS_STATE"/traces-counts/traces-"$BIN"-*.txt
            fi
            ;;
        warm | layer-warm)
            if [ ! -d "$cache" ] || [ ! -f "$CTS_STATE/$BIN/cold-done" ]; then
                note "$tag: no cold run of $BIN in $CTS_STATE (run cold first, on the same machine): not run"
                INCOMPLETE=1
                return
            fi
            ;;
    esac
    if [ "$mode" != plain ]; then
        [ "$resume" = 1 ] || rm -rf "$traces"
        MODE_ENV+=(JITCACHE_DIR="$cache" JITCACHE_TRACE=1 JITCACHE_TRACE_DIR="$traces"
            JITCACHE_TRACE_MAX_FILES=0 JITCACHE_TRACE_MAX_SIZE=0 JITCACHE_TRACE_MAX_AGE=0)
        [ -n "$JITCACHE_TOOL" ] && MODE_ENV+=(JITCACHE_HELPER="$JITCACHE_TOOL")
        case "$mode" in
            layer-*) MODE_ENV+=(OPENCL_LAYERS="$JITCACHE_LIB") ;;
            *) MODE_ENV+=(LD_PRELOAD="$JITCACHE_LIB") ;;
        esac
        if [ -n "$CTS_JITCACHE_ENV" ]; then
            local extra
            read -r -a extra <<<"$CTS_JITCACHE_ENV"
            MODE_ENV+=("${extra[@]}")
        fi
    fi
    printf '%s\n' "${MODE_ENV[@]}" >"$ldir/env.txt"

    # The test list (sorted by --list; the CTS runs a selection in its own registration order).
    local all=()
    mapfile -t all < <(cd "$CTS_DIR" && env "${BASE_ENV[@]}" "./$BIN" --list 2>/dev/null | sed -n 's/^\t\([^[:space:]]*\)[[:space:]]*$/\1/p')
    if [ "${#all[@]}" = 0 ]; then
        note "$tag: ./$BIN --list named no tests"
        SETUP_ERROR=1
        return
    fi
    declare -A outcome=()
    local todo=() skip_pats=() only_pats=()
    read -r -a skip_pats <<<"$CTS_SKIP"
    read -r -a only_pats <<<"$CTS_TESTS"
    for t in "${all[@]}"; do
        if [ "${#only_pats[@]}" -gt 0 ] && ! matches_any "$t" "${only_pats[@]}"; then continue; fi
        if [ "${#skip_pats[@]}" -gt 0 ] && matches_any "$t" "${skip_pats[@]}"; then
            outcome[$t]=skipped
        else
            todo+=("$t")
        fi
    done
    local exit_state=ok chunk=0
    if [ "$resume" = 1 ]; then
        local o kept=()
        while IFS=$'\t' read -r t o; do
            if [ "$t" = "@process-exit" ]; then
                exit_state=$o
            elif [ -n "$t" ] && [ "$o" != "not run" ] && [ -z "${outcome[$t]+x}" ]; then
                outcome[$t]=$o
            fi
        done <"$outf"
        for t in "${todo[@]}"; do [ -n "${outcome[$t]+x}" ] || kept+=("$t"); done
        todo=("${kept[@]}")
        chunk=$(find "$ldir" -maxdepth 1 -name 'chunk*.log' | wc -l)
    fi
    log "$tag: ${#todo[@]} tests to run"

    while [ "${#todo[@]}" -gt 0 ]; do
        local left=$((CTS_BUDGET - (SECONDS - START)))
        if [ "$left" -lt 20 ]; then
            note "$tag: time budget (CTS_BUDGET=$CTS_BUDGET s) used up: ${#todo[@]} tests not run"
            for t in "${todo[@]}"; do outcome[$t]="not run"; done
            INCOMPLETE=1
            break
        fi
        local limit=$left budget_limited=1
        if [ "$CTS_CHUNK_TIMEOUT" -gt 0 ] && [ "$CTS_CHUNK_TIMEOUT" -lt "$left" ]; then
            limit=$CTS_CHUNK_TIMEOUT
            budget_limited=0
        fi
        chunk=$((chunk + 1))
        local logf=$ldir/chunk$chunk.log json=$ldir/chunk$chunk.json names=$ldir/chunk$chunk.names
        printf '%s\n' "${todo[@]}" >"$names"
        run_chunk "$logf" "$json" "$limit" "${todo[@]}"
        local parsed
        parsed=$(parse_log "$names" "$logf")
        local started=() last="" summary=0 errs=0
        declare -A seen_outcome=()
        while IFS=$'\t' read -r kind name what; do
            case "$kind" in
                S) started+=("$name"); last=$name ;;
                O) seen_outcome[$name]=$what ;;
                E) outcome[$name]=$what; errs=$((errs + 1)) ;;
                X) summary=1 ;;
            esac
        done <<<"$parsed"
        local ended_normally=0
        [ "$CHUNK_HOW" = exited ] && { [ "$CHUNK_RC" = 0 ] || [ "$CHUNK_RC" = 1 ]; } && ended_normally=1
        local what_end=crashed
        [ "$CHUNK_HOW" != exited ] && what_end=hung

        if [ -s "$json" ]; then
            # The harness finished its selection: its results file is authoritative.
            while IFS=$'\t' read -r name res; do
                case "$res" in
                    pass) outcome[$name]=passed ;;
                    fail) outcome[$name]=FAILED ;;
                    skip) outcome[$name]="not supported" ;;
                    *) outcome[$name]="$res" ;;
                esac
            done < <(sed -n 's/^[[:space:]]*"\([^"]*\)": "\(pass\|fail\|skip\)",\{0,1\}[[:space:]]*$/\1\t\2/p' "$json")
            if [ "$ended_normally" = 0 ]; then
                note "$tag chunk $chunk: the CTS process $what_end after its last test (exit status $CHUNK_RC, $CHUNK_HOW)"
                exit_state=$what_end
            fi
        elif [ "${#started[@]}" = 0 ]; then
            if [ "$errs" -gt 0 ]; then
                note "$tag chunk $chunk: the harness refused $errs test name(s); retrying without them"
            elif [ "$ended_normally" = 1 ]; then
                note "$tag chunk $chunk: the CTS ran no test and wrote no results (exit status $CHUNK_RC); see the log"
                for t in "${todo[@]}"; do outcome[$t]=FAILED; done
                exit_state=crashed
            else
                note "$tag chunk $chunk: the CTS process $what_end before its first test (exit status $CHUNK_RC, $CHUNK_HOW)"
                for t in "${todo[@]}"; do outcome[$t]=$what_end; done
                exit_state=$what_end
            fi
        else
            # Ended without its results file: crashed, hung, or ran out of time.
            for t in "${started[@]}"; do
                if [ -n "${seen_outcome[$t]+x}" ]; then
                    outcome[$t]=${seen_outcome[$t]}
                else
                    outcome[$t]=FAILED # moved on without a verdict: the harness failed its setup
                fi
            done
            if [ "$CHUNK_HOW" = timeout ] && [ "$budget_limited" = 1 ]; then
                outcome[$last]="not run"
                INCOMPLETE=1
                note "$tag chunk $chunk: stopped at the end of the time budget while running $last"
            elif [ "$summary" = 1 ]; then
                exit_state=$what_end
                note "$tag chunk $chunk: the CTS process $what_end after its last test, before its results file (exit status $CHUNK_RC, $CHUNK_HOW)"
            else
                outcome[$last]=$what_end
                note "$tag chunk $chunk: $last $what_end (exit status $CHUNK_RC, $CHUNK_HOW)"
            fi
        fi
        unset seen_outcome
        # Resume with the tests this process did not reach.
        local next=()
        for t in "${todo[@]}"; do
            [ -n "${outcome[$t]+x}" ] || next+=("$t")
        done
        if [ "${#next[@]}" -ge "${#todo[@]}" ]; then
            note "$tag chunk $chunk: no progress; ${#next[@]} tests left not run"
            for t in "${next[@]}"; do outcome[$t]="not run"; done
            INCOMPLETE=1
            break
        fi
        todo=("${next[@]}")
    done

    local wall=$((SECONDS - mstart + prev_wall))
    # Let capture helpers finish, then count this mode's traces.
    if [ "$mode" != plain ]; then
        if [ -n "$JITCACHE_TOOL" ]; then
            local wait_s=$((CTS_BUDGET - (SECONDS - START) - 10))
            [ "$wait_s" -gt "$CTS_WAIT" ] && wait_s=$CTS_WAIT
            [ "$wait_s" -lt 5 ] && wait_s=5
            env "${BASE_ENV[@]}" JITCACHE_DIR="$cache" "$JITCACHE_TOOL" wait --timeout "${wait_s}s" >"$ldir/jitcache-wait.txt" 2>&1 ||
                note "$tag: jitcache wait: $(tail -n 1 "$ldir/jitcache-wait.txt")"
            env "${BASE_ENV[@]}" JITCACHE_DIR="$cache" "$JITCACHE_TOOL" stats >"$ldir/jitcache-stats.txt" 2>&1
        fi
        count_traces "$traces" "$CTS_STATE/traces-counts/traces-$tag.txt"
        if [ "$(awk '$1 == "files" {print $2}' "$CTS_STATE/traces-counts/traces-$tag.txt")" = 0 ]; then
            case "$mode" in
                layer-*) note "$tag: jitcache wrote no trace: the loader ($LOADER_DESC) may not load OPENCL_LAYERS (the CUDA toolkit's libOpenCL.so.1 does not; run the layer modes with CTS_LOADER=carried)" ;;
                *) note "$tag: jitcache wrote no trace (not loaded? see $tag logs: 'cannot be preloaded', refused folders)" ;;
            esac
            INCOMPLETE=1
        fi
        # Keep the unusual traces for a look (failed, stale, uncacheable), at most 50.
        mkdir -p "$ldir/traces"
        grep -l -E '"verdict"[[:space:]]*:[[:space:]]*"(failed|stale|uncacheable)"' "$traces"/*.json 2>/dev/null |
            head -n 50 | while read -r f; do cp "$f" "$ldir/traces/"; done
        case "$mode" in cold | layer-cold) touch "$CTS_STATE/$BIN/cold-done" ;; esac
    fi

    {
        for t in "${all[@]}"; do
            [ -n "${outcome[$t]+x}" ] && printf '%s\t%s\n' "$t" "${outcome[$t]}"
        done
        printf '@process-exit\t%s\n' "$exit_state"
    } >"$outf"
    echo "$wall" >"$CTS_STATE/outcomes/.wall-$tag"
    CALL_OUTCOMES+=("outcomes-$tag.txt")
    log "$tag: done in ${wall}s: $(cut -f2 "$outf" | sort | uniq -c | awk '{c=$1; $1=""; printf "%s%s=%d", sep, substr($0,2), c; sep=", "}')"
}

for b in $CTS_BINARIES; do
    for m in $CTS_MODES; do
        run_mode "$b" "$m"
    done
done

# ---------------------------------------------------------------------------------------------------
# Comparison with plain, over every mode whose outcomes the state holds for these binaries.
compare() {
    local total=0 differ=0 notrun=0 b f m
    for b in $CTS_BINARIES; do
        local modes=()
        for m in plain cold warm layer-cold layer-warm; do
            [ -f "$CTS_STATE/outcomes/outcomes-$b-$m.txt" ] && modes+=("$m")
        done
        echo
        echo "== $b"
        printf '%-11s %6s %7s %7s %9s %8s %5s %8s %8s %7s  %s\n' mode tests passed FAILED "not-supp" crashed hung skipped "not-run" wall_s "traces (verdict counts)"
        for m in "${modes[@]}"; do
            f=$CTS_STATE/outcomes/outcomes-$b-$m.txt
            local tr="-"
            if [ -f "$CTS_STATE/traces-counts/traces-$b-$m.txt" ]; then
                tr=$(awk '{printf "%s%s=%s", sep, $1, $2; sep=" "}' "$CTS_STATE/traces-counts/traces-$b-$m.txt")
            fi
            awk -F'\t' -v m="$m" -v w="$(cat "$CTS_STATE/outcomes/.wall-$b-$m" 2>/dev/null || echo '?')" -v tr="$tr" '
                $1 == "@process-exit" { ex = $2; next }
                { n++; c[$2]++ }
                END { printf "%-11s %6d %7d %7d %9d %8d %5d %8d %8d %7s  %s%s\n", m, n, c["passed"], c["FAILED"], c["not supported"], c["crashed"], c["hung"], c["skipped"], c["not run"], w, tr, (ex != "ok" ? "  [process exit: " ex "]" : "") }' "$f"
        done
        if [ ! -f "$CTS_STATE/outcomes/outcomes-$b-plain.txt" ]; then
            echo "no plain outcomes for $b: nothing to compare with (run CTS_MODES=plain first)"
            INCOMPLETE=1
            continue
        fi
        local plain=$CTS_STATE/outcomes/outcomes-$b-plain.txt
        echo "plain failures ($b): $(awk -F'\t' '$2 != "passed" && $2 != "not supported" && $2 != "skipped" && $1 != "@process-exit" {printf "%s%s (%s)", sep, $1, $2; sep=", "}' "$plain")"
        # Every test named in any mode; the row shows each mode's outcome where it differs from plain.
        local args=()
        for m in "${modes[@]}"; do args+=("$CTS_STATE/outcomes/outcomes-$b-$m.txt"); done
        local res
        res=$(awk -F'\t' -v b="$b" -v modes="${modes[*]}" '
            BEGIN { nm = split(modes, M, " ") }
            FNR == 1 { fi++ }
            { o[fi, $1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
            END {
                tests = 0; differ = 0; notrun = 0
                for (i = 1; i <= n; i++) {
                    t = order[i]; if (t != "@process-exit") tests++
                    p = ((1, t) in o) ? o[1, t] : "absent"
                    row = ""; d = 0; nr = 0
                    for (k = 2; k <= nm; k++) {
                        v = ((k, t) in o) ? o[k, t] : "absent"
                        if (v == p) continue
                        if (v == "not run" || v == "absent" || p == "not run" || p == "absent") nr = 1; else d = 1
                        row = row "\t" M[k] "=" v
                    }
                    if (M[1] != "plain") continue
                    if (d) { differ++; print "DIFF\t" b "\t" t "\tplain=" p row }
                    else if (nr) { notrun++; print "INCOMPLETE\t" b "\t" t "\tplain=" p row }
                }
                print "COUNT\t" tests "\t" differ "\t" notrun
            }' "${args[@]}")
        local cnt
        cnt=$(printf '%s\n' "$res" | awk -F'\t' '$1 == "COUNT"')
        total=$((total + $(echo "$cnt" | cut -f2)))
        differ=$((differ + $(echo "$cnt" | cut -f3)))
        notrun=$((notrun + $(echo "$cnt" | cut -f4)))
        if printf '%s\n' "$res" | grep -q '^DIFF'; then
            echo "differ from plain ($b):"
            printf '%s\n' "$res" | awk -F'\t' '$1 == "DIFF" { $1 = ""; sub(/^\t/, ""); print "  " $0 }' OFS='\t'
        else
            echo "differ from plain ($b): none (modes: ${modes[*]})"
        fi
        if printf '%s\n' "$res" | grep -q '^INCOMPLETE'; then
            echo "not run / absent in some mode ($b):"
            printf '%s\n' "$res" | awk -F'\t' '$1 == "INCOMPLETE" { $1 = ""; sub(/^\t/, ""); print "  " $0 }' OFS='\t'
        fi
    done
    echo
    [ "$notrun" -gt 0 ] && INCOMPLETE=1
    local tail_note=""
    [ "$notrun" -gt 0 ] && tail_note=" ($notrun not run or absent in some mode)"
    echo "cts: $total tests, $differ differ from plain$tail_note"
    DIFFER=$differ
}
DIFFER=0
compare >"$CALL/compare.txt"
status=0
[ "$INCOMPLETE" = 1 ] || [ "$SETUP_ERROR" = 1 ] && status=2
[ "$DIFFER" -gt 0 ] && status=1
finish "$status"
