#!/usr/bin/env bash
# Builds the Debian package: build/jitcache_<version>_<arch>.deb (library, tool, man pages, bash
# completion, docs; Depends computed by dpkg-shlibdeps). Install it with
#   sudo apt install ./build/jitcache_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# The library goes to the multiarch dir, and the tool looks for it there.
scripts/build.sh -DCMAKE_INSTALL_LIBDIR="lib/$arch"
cmake --build "$build_dir" -j"$(nproc)" --target jitcache_docs
(cd "$build_dir" && cpack -G DEB)
ls "$build_dir"/jitcache_*.deb
