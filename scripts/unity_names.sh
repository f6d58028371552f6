#!/usr/bin/env bash
# Checks that every product library still compiles as ONE unity batch (syntax only): two files of a
# library that define one name in an anonymous namespace build today only while CMake's batches of
# 8 keep them apart, and adding a file, or a source property that takes a file out of the batches
# (the asan build's UBSan exception), moves the boundaries: CI's asan build once failed that way.
# Configures build-unity-names (BUILD_DIR picks another folder); about a minute on 2 cores. Needs
# python3 (scripts/install-deps.sh --tests).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-unity-names}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITCACHE_BUILD_TESTS=OFF \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
cmake --build "$build_dir" --target jitcache_commit_header >/dev/null  # the one generated header
python3 - "$build_dir/compile_commands.json" "$(nproc)" <<'PY'
import json, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

commands = [c for c in json.load(open(sys.argv[1])) if "/Unity/" in c["file"]]

def check(c):
    command = re.sub(r" -o \S+", " -fsyntax-only", c["command"])
    done = subprocess.run(command, shell=True, cwd=c["directory"], capture_output=True, text=True)
    return c["file"], done.returncode, done.stderr

failed = 0
with ThreadPoolExecutor(int(sys.argv[2])) as pool:
    for name, code, errors in pool.map(check, commands):
        if code:
            failed += 1
            print(f"{name}: a name defined twice in one library (rename one):\n{errors[:4000]}")
print(f"unity_names: {len(commands)} libraries, each as one batch: {failed} failed")
sys.exit(1 if failed else 0)
PY
