#!/usr/bin/env bash
# Installs every Debian package jitcache builds, tests and runs its examples with.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  dpkg-dev  # scripts/package.sh: dpkg-shlibdeps computes the .deb's Depends
  lintian  # tests/install/deb_package_test.sh checks the .deb with it
  ocl-icd-opencl-dev opencl-headers ocl-icd-libopencl1 pocl-opencl-icd clinfo clblast-tests
  mesa-opencl-icd  # a second real OpenCL driver: rusticl on llvmpipe (tests/README.md, "OpenCL drivers")
  libze-dev libze1
  nlohmann-json3-dev rapidjson-dev libxxhash-dev libgtest-dev googletest libcli11-dev libhiredis-dev
  python3-pyopencl
  python3-opencv python3-numpy hashcat  # tests/apps (the real-application suite) and bench/clients.sh
  libssl-dev redis-server
  libcurl4-openssl-dev  # HTTP(S) remotes (libjitcache-tiers.so only)
  nginx-core  # tests: the HTTP remote against nginx's WebDAV PUT (--with-http_dav_module)
  libarchive-dev  # tests only: an independent reader of the packs jitcache writes
  gnuplot-nox  # bench/ plots
  g++-mingw-w64-x86-64 wine64  # Windows build (jitcache.dll) and its tests under Wine
  clang libclang-rt-14-dev  # scripts/sanitize.sh: ASan/TSan builds and libFuzzer targets
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${packages[@]}"
