# FindLiquibook: the Liquibook order book headers, a benchmark peer and test
# oracle only (never linked into the product). They come from the PyPI wheel
# `liquibook` that `./nanotick setup` installs into build/venv (pinned in
# tools/requirements-test.txt); the wheel ships them under site-packages/include.
#
# Provides the INTERFACE target Liquibook::liquibook: include dirs as SYSTEM
# (both <liquibook/book/...> and the headers' own <book/...> style), which
# silences the warnings of its headers, including their template instantiations,
# and LIQUIBOOK_IGNORES_DEPRECATED_CALLS. Deliberately no `-w` in the interface:
# it would apply to the whole consuming translation unit and hide our own
# warnings (the adapter and the tests are built with -Werror).
# Sets Liquibook_FOUND and Liquibook_INCLUDE_DIR.
if(TARGET Liquibook::liquibook)
  set(Liquibook_FOUND TRUE)
  return()
endif()

file(GLOB _liquibook_candidates
     "${PROJECT_SOURCE_DIR}/build/venv/lib/python3*/site-packages/include")
find_path(Liquibook_INCLUDE_DIR
          NAMES liquibook/book/order_book.h
          HINTS ${_liquibook_candidates}
          NO_DEFAULT_PATH)
unset(_liquibook_candidates)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Liquibook
  REQUIRED_VARS Liquibook_INCLUDE_DIR
  FAIL_MESSAGE "Liquibook headers not found under ${PROJECT_SOURCE_DIR}/build/venv/lib/python3*/site-packages/include: run ./nanotick setup (it pip-installs liquibook from tools/requirements-test.txt)")

if(Liquibook_FOUND)
  add_library(Liquibook::liquibook INTERFACE IMPORTED GLOBAL)
  target_include_directories(Liquibook::liquibook SYSTEM INTERFACE
                             ${Liquibook_INCLUDE_DIR} ${Liquibook_INCLUDE_DIR}/liquibook)
  target_compile_definitions(Liquibook::liquibook INTERFACE LIQUIBOOK_IGNORES_DEPRECATED_CALLS)
endif()
mark_as_advanced(Liquibook_INCLUDE_DIR)
