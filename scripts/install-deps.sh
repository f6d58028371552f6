#!/usr/bin/env bash
# Installs the Debian packages jitcache needs (Debian 12), without recommends.
#   scripts/install-deps.sh          what building and using it need: the compiler, CMake, the
#                                    OpenCL and Level Zero loaders and headers, PoCL (the CPU
#                                    driver the demo runs on) and the libraries the product links.
#                                    Enough for scripts/build.sh, scripts/demo.sh, scripts/package.sh.
#   scripts/install-deps.sh --tests  those and the test suite's (scripts/test.sh runs it): GoogleTest,
#                                    the real apps, servers and drivers the tests run, the Windows
#                                    cross-build, clang for scripts/sanitize.sh.
#   --list                           prints the packages of the set instead of installing them.
# Asks apt (and sudo) nothing when every package of the set is installed already.
set -euo pipefail
usage() { echo "usage: $0 [--tests] [--list]" >&2; exit 2; }
tests=false list=false
for argument in "$@"; do
  case "$argument" in
    --tests) tests=true ;;
    --list) list=true ;;
    *) usage ;;
  esac
done

# What the lean build links and runs with (top-level CMakeLists.txt, store/, tools/, examples/).
packages=(
  build-essential cmake pkg-config git
  dpkg-dev  # scripts/package.sh: dpkg-shlibdeps computes the .deb's Depends
  ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd
  libze-dev libze1
  nlohmann-json3-dev rapidjson-dev libxxhash-dev libcli11-dev
  libhiredis-dev libssl-dev libcurl4-openssl-dev  # the remote tier and packs (libjitcache-tiers.so)
)
# What only the tests, benchmarks and sanitizer runs need (scripts/test.sh, scripts/sanitize.sh).
test_packages=(
  libgtest-dev googletest python3
  lintian  # tests/install/deb_package_test.sh checks the .deb with it
  clinfo clblast-tests
  mesa-opencl-icd  # a second real OpenCL driver: rusticl on llvmpipe (tests/README.md, "OpenCL drivers")
  python3-pyopencl python3-opencv python3-numpy hashcat  # tests/apps (the real-application suite) and bench/clients.sh
  redis-server
  nginx-core  # the HTTP remote against nginx's WebDAV PUT (--with-http_dav_module)
  nodejs npm  # the S3 remote against s3rver (npm, below: Debian does not package it)
  libarchive-dev  # an independent reader of the packs jitcache writes
  gnuplot-nox  # bench/ plots
  g++-mingw-w64-x86-64 wine64  # Windows build (jitcache.dll) and its tests under Wine
  clang libclang-rt-14-dev  # scripts/sanitize.sh: ASan/TSan builds and libFuzzer targets
)
# A machine may carry another vendor's nodejs (NodeSource's bundles npm and conflicts with
# Debian's npm package): any npm on the PATH serves, so only a machine without one gets Debian's.
if command -v npm >/dev/null; then
  for index in "${!test_packages[@]}"; do
    case "${test_packages[$index]}" in nodejs | npm) unset 'test_packages[index]' ;; esac
  done
fi
if $tests; then packages+=("${test_packages[@]}"); fi
if $list; then printf '%s\n' "${packages[@]}"; exit 0; fi

# The S3 remote's tests run s3rver from this folder (tests/integration/s3_server.hpp looks there);
# without npm or a network they skip, naming the reason, and nothing else fails.
s3rver_dir="${XDG_CACHE_HOME:-$HOME/.cache}/jitcache-tests/s3rver"
install_s3rver() {
  $tests || return 0
  [ -x "$s3rver_dir/node_modules/.bin/s3rver" ] && return 0
  if ! command -v npm >/dev/null; then echo "install-deps: no npm: the S3 tests will skip"; return 0; fi
  npm install --prefix "$s3rver_dir" --no-audit --no-fund s3rver@3.7.1 >/dev/null 2>&1 ||
    echo "install-deps: npm could not install s3rver@3.7.1 into $s3rver_dir: the S3 tests will skip"
}

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages installed"
  install_s3rver
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
install_s3rver
