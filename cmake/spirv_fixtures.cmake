# SPIR-V test data is generated from OpenCL C with clang-14 + llvm-spirv-14 (Debian clang-14,
# llvm-spirv-14) and the .spv is committed, so machines without those tools still build and test.
# Where the tools exist, the build regenerates each fixture and a test checks that the committed
# file is exactly what its source compiles to (target `update_spirv_fixtures` rewrites them).
find_program(JITCACHE_CLANG_14 clang-14)
find_program(JITCACHE_LLVM_SPIRV_14 llvm-spirv-14)

if(JITCACHE_CLANG_14 AND JITCACHE_LLVM_SPIRV_14 AND NOT TARGET update_spirv_fixtures)
  add_custom_target(update_spirv_fixtures)
endif()

# jitcache_spirv_fixture(<name> <source.cl> <committed.spv>)
function(jitcache_spirv_fixture name source committed)
  if(NOT JITCACHE_CLANG_14 OR NOT JITCACHE_LLVM_SPIRV_14)
    return()
  endif()
  set(bitcode ${CMAKE_CURRENT_BINARY_DIR}/${name}.bc)
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/${name}.spv)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${JITCACHE_CLANG_14} -c -target spir64 -cl-std=CL2.0 -O2 -emit-llvm
            -Xclang -finclude-default-header -o ${bitcode} ${source}
    COMMAND ${JITCACHE_LLVM_SPIRV_14} ${bitcode} -o ${generated}
    DEPENDS ${source}
    COMMENT "Compiling ${name}.spv from OpenCL C"
    VERBATIM)
  add_custom_target(spirv_fixture_${name} ALL DEPENDS ${generated})
  add_custom_target(update_spirv_fixture_${name}
    COMMAND ${CMAKE_COMMAND} -E copy ${generated} ${committed}
    DEPENDS ${generated} VERBATIM)
  add_dependencies(update_spirv_fixtures update_spirv_fixture_${name})
  if(JITCACHE_BUILD_TESTS)
    add_test(NAME spirv_fixture_${name}_is_current
             COMMAND ${CMAKE_COMMAND} -E compare_files ${generated} ${committed})
    set_tests_properties(spirv_fixture_${name}_is_current PROPERTIES LABELS unit)
  endif()
endfunction()
