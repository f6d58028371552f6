# The Debian package (scripts/package.sh -> build/jitcache_<version>-1_amd64.deb): the library in
# the multiarch lib dir, the tool, its man pages and bash completion, the docs. Depends are
# computed by dpkg-shlibdeps from what the binaries link. docs/packaging.md says why and how.
# `cmake --install` and cpack install what is built; they do not build everything first (the
# tests and the Windows cross-build): scripts/package.sh builds the packaged targets.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# Who the package names as its maintainer (Maintainer, changelog). The default's example.org
# (RFC 2606) is a placeholder: whoever distributes the package sets a real address.
set(JITCACHE_PACKAGE_MAINTAINER "jitcache maintainers <jitcache@example.org>" CACHE STRING
    "Maintainer of the Debian package: Name <address>")
# The Debian revision: 0.1.0-1 is a non-native package, so its changelog is changelog.Debian.gz.
set(JITCACHE_DEBIAN_REVISION 1)

# Debian policy 12.5 / 12.7: the license in machine-readable form (DEP-5) and the Debian
# changelog, gzip -9n, in the doc dir. The changelog's newest entry must name this version.
install(FILES cmake/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(STRINGS cmake/debian/changelog.in JITCACHE_CHANGELOG_TOP LIMIT_COUNT 1)
if(NOT JITCACHE_CHANGELOG_TOP MATCHES "^jitcache \\(${PROJECT_VERSION}-${JITCACHE_DEBIAN_REVISION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog.in: the newest entry is not version "
                      "${PROJECT_VERSION}-${JITCACHE_DEBIAN_REVISION}: add one")
endif()
configure_file(cmake/debian/changelog.in ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog @ONLY)
set(JITCACHE_CHANGELOG_GZ ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog.Debian.gz)
add_custom_command(OUTPUT ${JITCACHE_CHANGELOG_GZ}
  COMMAND gzip -9n -c changelog > changelog.Debian.gz
  DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/debian/changelog
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/debian
  COMMENT "Compressing the Debian changelog")
add_custom_target(jitcache_debian_changelog DEPENDS ${JITCACHE_CHANGELOG_GZ})
add_dependencies(jitcache_docs jitcache_debian_changelog)  # scripts/package.sh builds jitcache_docs
install(FILES ${JITCACHE_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jitcache)
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_CONTACT "${JITCACHE_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "persistent cache for OpenCL and Level Zero JIT compilation")
# Lines under 80 columns: dpkg shows them as they are.
set(CPACK_PACKAGE_DESCRIPTION "jitcache is injected into unmodified OpenCL and Level Zero applications
(LD_PRELOAD or the OpenCL ICD layer) and serves the binaries of program builds
from a persistent cache, so that each kernel is JIT-compiled once. The jitcache
tool runs programs under it, explains cache misses and manages the cache.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # jitcache_<version>-<revision>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${JITCACHE_DEBIAN_REVISION})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ocl-icd-libopencl1 (>= 2.3)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pocl-opencl-icd, redis-server")
set(CPACK_STRIP_FILES ON)
include(CPack)
