# NANOTICK_MARCH: the one -march of the build (root CMakeLists.txt sets the
# cache variable; presets and tools/bench/flag_matrix.sh override it).
# Checked here, so that a typo fails at configure time with the key, the value
# and the fix, not as an intrinsic error deep in src/core:
#   - one word: no spaces or semicolons (it becomes one compiler argument);
#   - the compiler accepts it and the ISA has SSE4.2 (src/core/crc32c.hpp uses
#     the crc32 instruction unconditionally; x86-64-v2 is the lowest level
#     that has it).
if(NANOTICK_MARCH STREQUAL "" OR NANOTICK_MARCH MATCHES "[ \t\r\n;]")
  message(FATAL_ERROR
    "NANOTICK_MARCH: must be one -march value without spaces (x86-64-v2, x86-64-v3, native, ...), "
    "got '${NANOTICK_MARCH}'. Set it with -DNANOTICK_MARCH=x86-64-v2 (the default).")
endif()

include(CheckCXXSourceCompiles)
# One cached result per compiler and value: changing either checks again.
string(MAKE_C_IDENTIFIER "NANOTICK_MARCH_OK_${CMAKE_CXX_COMPILER_ID}_${CMAKE_CXX_COMPILER_VERSION}_${NANOTICK_MARCH}"
       _nanotick_march_ok)
set(CMAKE_REQUIRED_FLAGS "-march=${NANOTICK_MARCH}")
set(CMAKE_REQUIRED_QUIET ON)
check_cxx_source_compiles("
#ifndef __SSE4_2__
#error no SSE4.2
#endif
int main() { return 0; }" ${_nanotick_march_ok})
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_QUIET)
if(NOT ${_nanotick_march_ok})
  message(FATAL_ERROR
    "NANOTICK_MARCH: ${CMAKE_CXX_COMPILER} rejects -march=${NANOTICK_MARCH} or that ISA lacks SSE4.2 "
    "(the journal's crc32 needs it), got '${NANOTICK_MARCH}'. Use x86-64-v2 (the default), x86-64-v3, "
    "native or another -march this compiler knows that includes SSE4.2.")
endif()
unset(_nanotick_march_ok)

add_compile_options(-march=${NANOTICK_MARCH})
