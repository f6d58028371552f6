# The Debian package (scripts/package.sh -> build/jitcache_<version>_amd64.deb): the library in
# the multiarch lib dir, the tool, its man pages and bash completion, the docs. Depends are
# computed by dpkg-shlibdeps from what the binaries link. docs/packaging.md says why and how.
# `cmake --install` and cpack install what is built; they do not build everything first (the
# tests and the Windows cross-build): scripts/package.sh builds the packaged targets.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jitcache)
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_CONTACT "jitcache maintainers <jitcache@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "persistent cache for OpenCL and Level Zero JIT compilation")
set(CPACK_PACKAGE_DESCRIPTION "jitcache is injected into unmodified OpenCL and Level Zero applications \
(LD_PRELOAD or the OpenCL ICD layer) and serves the binaries of program builds from a persistent \
cache, so that each kernel is JIT-compiled once. The jitcache tool runs programs under it and \
inspects the cache.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # jitcache_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ocl-icd-libopencl1 (>= 2.3)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd, redis-server")
set(CPACK_STRIP_FILES ON)
include(CPack)
