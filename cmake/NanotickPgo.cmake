# Profile-guided optimisation (issue 13). Two builds and a training run between
# them, done in one command by ./nanotick build-pgo:
#   NANOTICK_PGO=generate  instrumented build (preset pgo-train); running its
#                          programs writes the profile into NANOTICK_PGO_DIR
#                          (tools/bench/pgo_train.sh runs the training workload)
#   NANOTICK_PGO=use       optimised with that profile (preset pgo)
#   NANOTICK_PGO=""        off (every other preset)
# GCC keeps one .gcda per object file, named after the object's path:
# -fprofile-prefix-path makes those names relative to the build directory, so
# that build/pgo finds what build/pgo-train wrote. A consequence to know: a
# function's profile comes only from the object it was compiled into, so a
# header-only template (the engine) is trained per program that instantiates
# it -- the training must run each program whose speed matters.
# -fprofile-partial-training: what the training did not run is optimised as
# without a profile (not for size, GCC's default for code never run).
# Clang: -fprofile-generate writes .profraw files; configuring the use build
# merges them with llvm-profdata (of the compiler's version) into one
# .profdata in the build directory. Profiles are keyed by function name there.
# The profile is not a build dependency: after a new training, rebuild the use
# build from clean (./nanotick build-pgo does).
set(NANOTICK_PGO "" CACHE STRING "Profile-guided optimisation: '' (off), generate (instrumented, for training), use (optimised with the profile in NANOTICK_PGO_DIR)")
set_property(CACHE NANOTICK_PGO PROPERTY STRINGS "" generate use)
set(NANOTICK_PGO_DIR "${CMAKE_BINARY_DIR}/pgo-profile" CACHE PATH "Where the training writes the profile and the use build reads it (relative: from the build directory)")

if(NANOTICK_PGO STREQUAL "")
  return()
endif()
if(NOT NANOTICK_PGO MATCHES "^(generate|use)$")
  message(FATAL_ERROR "NANOTICK_PGO: must be '' (off), generate or use, got '${NANOTICK_PGO}'")
endif()
if(NOT NANOTICK_SANITIZER STREQUAL "")
  message(FATAL_ERROR "NANOTICK_PGO=${NANOTICK_PGO} with NANOTICK_SANITIZER=${NANOTICK_SANITIZER}: profile-guided "
                      "optimisation is for release builds; set one of them to ''")
endif()
if(NANOTICK_PGO_DIR STREQUAL "")
  message(FATAL_ERROR "NANOTICK_PGO_DIR: must name a directory when NANOTICK_PGO=${NANOTICK_PGO}, got ''")
endif()
cmake_path(ABSOLUTE_PATH NANOTICK_PGO_DIR BASE_DIRECTORY "${CMAKE_BINARY_DIR}" NORMALIZE OUTPUT_VARIABLE _pgo_dir)

if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  if(NANOTICK_PGO STREQUAL "generate")
    # atomic: the programs are multi-threaded (rings, agents); counters updated
    # without it are torn and the profile lies about the hottest loops.
    add_compile_options(-fprofile-generate=${_pgo_dir} -fprofile-update=atomic
                        -fprofile-prefix-path=${CMAKE_BINARY_DIR})
    add_link_options(-fprofile-generate=${_pgo_dir} -fprofile-update=atomic)
  else()
    file(GLOB_RECURSE _pgo_files "${_pgo_dir}/*.gcda")
    if(NOT _pgo_files)
      message(FATAL_ERROR "NANOTICK_PGO=use: no profile (*.gcda) in NANOTICK_PGO_DIR=${_pgo_dir}. Build the "
                          "instrumented preset and run the training first: ./nanotick build-pgo does both.")
    endif()
    list(LENGTH _pgo_files _pgo_count)
    message(STATUS "PGO: using ${_pgo_count} profile files from ${_pgo_dir}")
    # missing-profile: objects the training never ran (tests, tools) have none.
    # coverage-mismatch stays a warning: a source edited since the training
    # builds with a stale profile for that function instead of failing.
    add_compile_options(-fprofile-use=${_pgo_dir} -fprofile-partial-training
                        -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile -Wno-error=coverage-mismatch)
    add_link_options(-fprofile-use=${_pgo_dir} -fprofile-partial-training)
    unset(_pgo_files)
    unset(_pgo_count)
  endif()
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  if(NANOTICK_PGO STREQUAL "generate")
    add_compile_options(-fprofile-generate=${_pgo_dir} -fprofile-update=atomic)
    add_link_options(-fprofile-generate=${_pgo_dir} -fprofile-update=atomic)
  else()
    string(REGEX MATCH "^[0-9]+" _clang_major "${CMAKE_CXX_COMPILER_VERSION}")
    find_program(NANOTICK_LLVM_PROFDATA NAMES llvm-profdata-${_clang_major} llvm-profdata
                 DOC "llvm-profdata of the compiler's version (merges the training's .profraw files)")
    if(NOT NANOTICK_LLVM_PROFDATA)
      message(FATAL_ERROR "NANOTICK_PGO=use with clang ${CMAKE_CXX_COMPILER_VERSION}: llvm-profdata-${_clang_major} "
                          "not found; install llvm-${_clang_major} or set NANOTICK_LLVM_PROFDATA")
    endif()
    file(GLOB _pgo_files "${_pgo_dir}/*.profraw")
    if(NOT _pgo_files)
      message(FATAL_ERROR "NANOTICK_PGO=use: no profile (*.profraw) in NANOTICK_PGO_DIR=${_pgo_dir}. Build the "
                          "instrumented build (NANOTICK_PGO=generate) and run the training first "
                          "(tools/bench/pgo_train.sh BUILD_DIR).")
    endif()
    set(_profdata "${CMAKE_BINARY_DIR}/pgo.profdata")
    execute_process(COMMAND ${NANOTICK_LLVM_PROFDATA} merge -o ${_profdata} ${_pgo_files}
                    RESULT_VARIABLE _merge_rc ERROR_VARIABLE _merge_err)
    if(NOT _merge_rc EQUAL 0)
      message(FATAL_ERROR "NANOTICK_PGO=use: ${NANOTICK_LLVM_PROFDATA} merge of ${_pgo_dir}/*.profraw failed: "
                          "${_merge_err}")
    endif()
    list(LENGTH _pgo_files _pgo_count)
    message(STATUS "PGO: merged ${_pgo_count} raw profiles from ${_pgo_dir} into ${_profdata}")
    # out-of-date / backend-plugin (a function's CFG changed since the
    # training) stay warnings, as GCC's coverage-mismatch above.
    add_compile_options(-fprofile-use=${_profdata} -Wno-error=profile-instr-out-of-date
                        -Wno-error=backend-plugin)
    add_link_options(-fprofile-use=${_profdata})
    unset(_profdata)
    unset(_merge_rc)
    unset(_merge_err)
    unset(_pgo_files)
    unset(_pgo_count)
  endif()
  unset(_clang_major)
else()
  message(FATAL_ERROR "NANOTICK_PGO=${NANOTICK_PGO}: supported with GCC and Clang only, not "
                      "${CMAKE_CXX_COMPILER_ID} (${CMAKE_CXX_COMPILER})")
endif()
message(STATUS "PGO: ${NANOTICK_PGO}, profile directory ${_pgo_dir}")
unset(_pgo_dir)
