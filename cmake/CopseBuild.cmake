# Build-wide settings: ccache, warnings-as-errors for project code, sanitizers,
# and helpers for declaring libraries and tests.

option(COPSE_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(COPSE_WERROR "Treat warnings in project code as errors" ON)
option(COPSE_PCH "Precompile the headers most translation units parse" ON)
option(COPSE_UNITY "Compile each target's sources in batches (unity build)" ON)

# Unity builds (docs/development.md, "Build times"): each target's sources
# compiled eight to a unit, so that the headers they share are parsed, and
# their inline functions and templates compiled, once per batch instead of
# once per file. Names at namespace scope in a source file (anonymous
# namespaces included) must therefore be unique within their target. A file
# with flags of its own (copse_paths_in) is compiled alone, as CMake does
# for any source with its own definitions.
set(CMAKE_UNITY_BUILD ${COPSE_UNITY})
set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)

if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
endif()

# LLVM's linker (Debian's lld) links the sanitizer tree's executables about
# 2.5 times faster than GNU ld (docs/development.md, "Build times").
find_program(COPSE_LLD ld.lld)
if(COPSE_LLD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_link_options(-fuse-ld=lld)
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
# A class defined in a source file whose member has a type from that file's
# anonymous namespace is fine alone and warned about once the file is part
# of a unity batch (it is no longer the main file).
if(COPSE_UNITY AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND COPSE_WARNINGS -Wno-subobject-linkage)
endif()

if(COPSE_SANITIZE)
  # UBSan without three of its checks, which cost a quarter of the tree's
  # compile time (docs/development.md, "Build times"): vptr (a dynamic type
  # check on every member access through a polymorphic pointer), null (ASan
  # reports the dereference itself) and alignment (x86 loads misaligned data,
  # and the wire formats are read with memcpy or Cap'n Proto's own checks).
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr,null,alignment
                      -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # The test tree: -Og and line tables only (-g1, enough for file:line in a
  # sanitizer's report). GCC 12 compiles sanitized code at -O2 -g about seven
  # times slower; the libraries whose speed the tests feel (the scheduler
  # and its solvers, the simulator) are compiled at -O1 (copse_library HOT)
  # (docs/development.md, "Build times").
  set(CMAKE_C_FLAGS_RELWITHDEBINFO "-Og -g1 -DNDEBUG")
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-Og -g1 -DNDEBUG")
  set(COPSE_HOT_FLAGS -O1)
  # Test programs' own units (copse_test) at -O0 without instrumentation: the
  # code under test, in the libraries they link, stays instrumented, and the
  # tests compile in half the time (docs/development.md, "Build times").
  set(COPSE_TEST_FLAGS -O0 -fno-sanitize=all)
endif()

# The libraries' definitions that change what their headers declare, for
# every translation unit alike: a precompiled header serves only units
# compiled with the same macros.
add_compile_definitions(FMT_SHARED SPDLOG_COMPILED_LIB SPDLOG_FMT_EXTERNAL SPDLOG_SHARED_LIB
                        ASIO_SEPARATE_COMPILATION ASIO_NO_DEPRECATED
                        ASIO_DISABLE_STD_ALIGNED_ALLOC GTEST_HAS_PTHREAD=1)

# Precompiled headers (docs/development.md, "Build times"): the standard and
# third-party headers that most translation units parse, parsed once per
# flavour of flags and reused by every target of that flavour: copse_pch
# for libraries and programs, copse_pch_hot for the HOT libraries (their
# own -O), copse_pch_test for tests (GoogleTest too). ccache caches units
# that use them (scripts/build.sh sets the sloppiness it needs).
set(COPSE_PCH_HEADERS
    <algorithm> <chrono> <cstdint> <filesystem> <fstream> <functional> <iostream> <map>
    <memory> <optional> <random> <set> <sstream> <string> <string_view> <thread>
    <unordered_map> <vector> <fmt/format.h> <spdlog/spdlog.h> <nlohmann/json.hpp>)

# Called once the dependencies are found (CMakeLists.txt).
function(copse_define_pch)
  if(NOT COPSE_PCH)
    return()
  endif()
  file(WRITE ${CMAKE_BINARY_DIR}/copse_pch.cc "// The precompiled headers' own unit.\n")
  set(flavours main test)
  if(COPSE_HOT_FLAGS)
    list(APPEND flavours hot)
  endif()
  # The units that use a precompiled header name it in their preprocessed
  # output, which is what ccache needs to cache them.
  add_compile_options(-fpch-preprocess)
  foreach(flavour ${flavours})
    set(t copse_pch_${flavour})
    add_library(${t} OBJECT ${CMAKE_BINARY_DIR}/copse_pch.cc)
    target_compile_options(${t} PRIVATE ${COPSE_WARNINGS})
    target_link_libraries(${t} PRIVATE fmt::fmt spdlog::spdlog nlohmann_json::nlohmann_json)
    set(headers ${COPSE_PCH_HEADERS})
    if(flavour STREQUAL "hot")
      target_compile_options(${t} PRIVATE ${COPSE_HOT_FLAGS})
    elseif(flavour STREQUAL "test")
      target_compile_options(${t} PRIVATE ${COPSE_TEST_FLAGS})
      target_link_libraries(${t} PRIVATE GTest::gtest GTest::gmock)
      list(APPEND headers <gtest/gtest.h> <gmock/gmock.h>)
    endif()
    target_precompile_headers(${t} PRIVATE ${headers})
  endforeach()
endfunction()

# `target` reuses the precompiled headers of `flavour` (main, hot, test).
function(copse_use_pch target flavour)
  if(COPSE_PCH)
    set_target_properties(${target} PROPERTIES PRECOMPILE_HEADERS_REUSE_FROM copse_pch_${flavour})
  endif()
endfunction()

# Every project target gets the warning flags and the precompiled headers;
# third-party headers come in through imported targets, which CMake already
# marks as system includes.
function(copse_target_defaults target)
  target_compile_options(${target} PRIVATE ${COPSE_WARNINGS})
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                             $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>)
  copse_use_pch(${target} main)
endfunction()

# A benchmark program (bench/): measured only from the release tree. The
# sanitizer tree builds it so that CI keeps it compiling (and the tests run
# the cluster suite's), at -O0 and without instrumentation of its own code,
# which halves its compile time; the libraries it links stay instrumented.
function(copse_bench_program target)
  if(NOT COPSE_SANITIZE)
    copse_target_defaults(${target})
    return()
  endif()
  target_compile_options(${target} PRIVATE ${COPSE_WARNINGS} -O0 -fno-sanitize=all)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
endfunction()

# copse_library(NAME [HOT] SOURCES... [DEPS ...]). HOT: code the tests spend
# their time in, compiled at -O1 in the test tree.
function(copse_library name)
  cmake_parse_arguments(ARG "HOT" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  copse_target_defaults(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  if(ARG_HOT AND COPSE_HOT_FLAGS)
    target_compile_options(${name} PRIVATE ${COPSE_HOT_FLAGS})
    copse_use_pch(${name} hot)
  endif()
endfunction()

# copse_test(NAME SOURCES... [DEPS ...] [LONG CASES...]): a GoogleTest binary
# whose cases ctest runs one by one (discovered when ctest runs, not at build
# time). LONG names cases (GoogleTest filters) that take minutes: they run
# together as NAME_long, labelled "long", which the test command leaves out
# (docs/development.md, "Tests").
function(copse_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LONG" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  copse_target_defaults(${name})
  target_compile_options(${name} PRIVATE ${COPSE_TEST_FLAGS})
  copse_use_pch(${name} test)
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(ARG_LONG)
    string(JOIN ":" long ${ARG_LONG})
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                         TEST_FILTER "-${long}" PROPERTIES TIMEOUT ${ARG_TIMEOUT})
    add_test(NAME ${name}_long COMMAND ${name} --gtest_filter=${long})
    set_tests_properties(${name}_long PROPERTIES LABELS long TIMEOUT 1800)
  else()
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT ${ARG_TIMEOUT})
  endif()
endfunction()

# copse_benchmark(NAME SOURCES... [DEPS ...]): a Google Benchmark binary. It is
# built in every tree (so CI keeps it compiling) but never run by ctest.
function(copse_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  copse_bench_program(${name})
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
