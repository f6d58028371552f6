# Dependencies of the Windows build, from the same Debian packages as the Linux one. All are used
# header-only: nlohmann-json, RapidJSON, xxhash (XXH_INLINE_ALL compiles xxhash.h into each user), the
# OpenCL headers and CLI11 (libcli11-dev, for the jitcache.exe tool). Only those directories are shown to the cross compiler, never /usr/include as a
# whole (it holds glibc's headers). The targets carry the names the Linux build uses.
set(JITCACHE_HOST_HEADERS ${CMAKE_BINARY_DIR}/host-headers)
file(MAKE_DIRECTORY ${JITCACHE_HOST_HEADERS})
foreach(entry CL CLI nlohmann rapidjson xxhash.h)
  if(NOT EXISTS /usr/include/${entry})
    message(FATAL_ERROR "/usr/include/${entry} missing: run scripts/install-deps.sh")
  endif()
  file(CREATE_LINK /usr/include/${entry} ${JITCACHE_HOST_HEADERS}/${entry} SYMBOLIC)
endforeach()

add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})
add_library(rapidjson_headers INTERFACE)
target_include_directories(rapidjson_headers SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})
add_library(PkgConfig::XXHASH INTERFACE IMPORTED)
target_include_directories(PkgConfig::XXHASH SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})
target_compile_definitions(PkgConfig::XXHASH INTERFACE XXH_INLINE_ALL)
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})
add_library(OpenCL::Headers INTERFACE IMPORTED)
target_include_directories(OpenCL::Headers SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})

# OpenCL.dll's import library for the example apps (jitcache.dll itself never links it), made
# from the list of OpenCL 1.2 entry points they call.
set(JITCACHE_OPENCL_IMPORT_LIB ${CMAKE_BINARY_DIR}/libOpenCL.dll.a)
add_custom_command(OUTPUT ${JITCACHE_OPENCL_IMPORT_LIB}
  COMMAND ${CMAKE_DLLTOOL} -d ${PROJECT_SOURCE_DIR}/examples/windows/OpenCL.def -l ${JITCACHE_OPENCL_IMPORT_LIB}
  DEPENDS ${PROJECT_SOURCE_DIR}/examples/windows/OpenCL.def
  COMMENT "OpenCL.dll import library")
add_custom_target(opencl_import_library DEPENDS ${JITCACHE_OPENCL_IMPORT_LIB})
add_library(jitcache_opencl_import INTERFACE)
target_include_directories(jitcache_opencl_import SYSTEM INTERFACE ${JITCACHE_HOST_HEADERS})
target_link_libraries(jitcache_opencl_import INTERFACE ${JITCACHE_OPENCL_IMPORT_LIB})
add_dependencies(jitcache_opencl_import opencl_import_library)
add_library(OpenCL::OpenCL ALIAS jitcache_opencl_import)

find_package(Threads REQUIRED)
