#!/usr/bin/env bash
# Builds the test suite under a sanitizer with clang and runs it:
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer into build-asan:
#                              unit tests, the libFuzzer targets (a few seconds each) and the
#                              integration tests that run our own apps (their binaries are
#                              instrumented too, so the ASan shim finds its runtime).
#   scripts/sanitize.sh tsan   ThreadSanitizer into build-tsan: unit tests (threads and processes
#                              on the store, background writer, engine).
# docs/reliability.md says why the split is what it is.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
case "$kind" in
  # The shared ASan runtime: libjitcache.so is preloaded into an app, so the shim and the app
  # must share one runtime (and the shim links with --no-undefined).
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
        runtime_dir=$(dirname "$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)")
        link="-shared-libasan -Wl,-rpath,$runtime_dir"
        extra=(-DJITCACHE_FUZZ=ON) ;;
  tsan) flags="-fsanitize=thread"
        link=""
        extra=() ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 2 ;;
esac
build_dir=build-$kind
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Warnings are errors in the gcc build (scripts/build.sh); clang's extra ones must not block here.
# -O1 and line tables only: what the sanitizers need for their reports (function, file, line),
# and about half the compile time of -O2 -g on CI's two cores (a gtest file 49 s -> 27 s).
optimize="-O1 -gline-tables-only -DNDEBUG -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Sanitize -DJITCACHE_WERROR=OFF \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS="$flags $optimize" -DCMAKE_CXX_FLAGS="$flags $optimize" \
  -DCMAKE_EXE_LINKER_FLAGS="${flags/-fsanitize=fuzzer-no-link/} $link" \
  -DCMAKE_SHARED_LINKER_FLAGS="${flags/-fsanitize=fuzzer-no-link/} $link" \
  "${launcher[@]}" "${extra[@]}" >/dev/null
jobs=$(nproc)
# Only what the runs below need. asan: the unit test binaries, the fuzz targets (the SPIR-V smoke
# run is a unit test), the shim, our apps and the two integration test binaries of the subset run
# below. tsan: the unit tests that start threads or processes (a race needs two): the others would
# cost CI minutes of compiling to find nothing. Everything else (the other integration tests, the
# Windows cross-build) would only cost CI time.
if [ "$kind" = asan ]; then
  targets="$(cd tests/unit && ls ./*_test.cpp | sed 's|^\./||; s|\.cpp$||')
$(cmake --build "$build_dir" --target help | sed -n 's/^\.\.\. \([A-Za-z0-9_]*\).*/\1/p' | grep -E '^fuzz_|_fuzz$' || true)
jitcache opencl_example opencl_misuse opencl_two_builds opencl_cache_test opencl_reliability_test"
else
  targets="$(cd tests/unit && grep -lE 'std::thread|std::async|fork\(|BackgroundWriter|OffThreadCall|MemoryTier' ./*_test.cpp |
    sed 's|^\./||; s|\.cpp$||')"
fi
# shellcheck disable=SC2086
cmake --build "$build_dir" -j"$jobs" --target $targets

supp=$PWD/scripts/sanitizers
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# verify_asan_link_order=0: the preloaded shim, not the runtime, comes first in the library list.
export ASAN_OPTIONS=detect_odr_violation=0:verify_asan_link_order=0
export LSAN_OPTIONS=suppressions=$supp/lsan.supp
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
if [ "$kind" = asan ]; then
  ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" -L 'unit|fuzz' -E spirv_fixture
  # A small integration subset (each real-app run costs seconds under ASan): the hostile
  # environments and misuse table, a hit, a corrupt entry. Only apps we build are instrumented
  # and can host the ASan shim; clinfo and clblast cannot.
  # Leak checking stays on for the unit and fuzz runs; in PoCL processes LSan's stop-the-world
  # tracer itself was seen to crash at exit (signal 11 in the tracer), which says nothing about us.
  ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0 \
  ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" -L integration \
    -R 'OpenClReliability|SecondRunHitsEveryBuild|CorruptedBinary'
else
  # Only the unit tests built above (the fuzz smoke runs are asan's).
  ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" -L unit -E 'spirv_fixture|_fuzz_smoke'
fi
