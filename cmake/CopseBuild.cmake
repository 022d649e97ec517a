# Build-wide settings: ccache, warnings-as-errors for project code, sanitizers,
# and helpers for declaring libraries and tests.

option(COPSE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(COPSE_WERROR "Treat warnings in project code as errors" ON)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

set(COPSE_WARNINGS -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
    -Wno-missing-field-initializers)
# GCC 12 at -O3 reports false -Wrestrict overlaps inside std::string's
# operator+ (a known GCC 12 false positive): a full release build of the
# tests failed on it (dfs/placement_test.cc, sim/scale_sim_test.cc).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND COPSE_WARNINGS -Wno-restrict)
endif()
if(COPSE_WERROR)
  list(APPEND COPSE_WARNINGS -Werror)
endif()

if(COPSE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Every project target gets the warning flags; third-party headers come in
# through imported targets, which CMake already marks as system includes.
function(copse_target_defaults target)
  target_compile_options(${target} PRIVATE ${COPSE_WARNINGS})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# copse_library(NAME SOURCES... [DEPS ...])
function(copse_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  copse_target_defaults(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# copse_test(NAME SOURCES... [DEPS ...]): a GoogleTest binary whose cases
# ctest runs one by one (discovered when ctest runs, not at build time).
function(copse_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  copse_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT ${ARG_TIMEOUT})
endfunction()

# copse_benchmark(NAME SOURCES... [DEPS ...]): a Google Benchmark binary. It is
# built in every tree (so CI keeps it compiling) but never run by ctest.
function(copse_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  copse_target_defaults(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endfunction()

# copse_paths_in(SOURCES...): these files, and only these, are compiled
# knowing where the source tree and the built executables are
# (COPSE_SOURCE_DIR, COPSE_TEST_SOURCE_DIR, COPSE_TEST_BIN_DIR; at run time
# $COPSE_SOURCE_DIR and $COPSE_BIN_DIR override them). Absolute paths in a
# file's flags make ccache miss in every other checkout, so no target carries
# them for all its files.
function(copse_paths_in)
  set_property(SOURCE ${ARGN} APPEND PROPERTY COMPILE_DEFINITIONS
               COPSE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
               COPSE_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
               COPSE_TEST_BIN_DIR="${CMAKE_BINARY_DIR}/bin")
endfunction()
