# The module graph (docs/CONTRIBUTING.md "Modules and binaries"), declared by
# the libraries' own target_link_libraries and enforced here at configure
# time, so an include against the graph fails the build before it compiles:
#
#   * a module is a library nanotick_<m> built from src/<m>/;
#   * NANOTICK_MODULE_LAYERS lists them from the bottom up: a module may link
#     only modules listed before it (dependencies point one way, no cycles);
#   * every `#include "<x>/..."` in src/<m>/ names m itself or a module that
#     nanotick_<m> links directly (a header reached only through another
#     module's link is an arrow nobody declared).
#
#   * NANOTICK_MODULE_NEVER lists "a:b" pairs: module a may never reach
#     module b, directly or through any module it links. The layers alone
#     would allow it (b may well sit below a); these are the arrows the design
#     forbids: a client of the venue never links the exchange (it reaches the
#     venue through the protocol only) nor the venue's credentials (it sends
#     its key; the venue checks it).
#
# The graph is written to ${CMAKE_BINARY_DIR}/module_graph.txt, one line per
# module ("trading -> venue, book, ..."); the test module_graph_matches_docs
# checks docs/CONTRIBUTING.md shows it as it is (cmake/DocShowsFile.cmake).
set(NANOTICK_MODULE_LAYERS core market config net ipc proto telemetry engine controls book venue access workload floor exchange client trading fix)
set(NANOTICK_MODULE_NEVER trading:exchange client:exchange trading:access client:access fix:exchange)

function(nanotick_module_links module out)
  get_target_property(type nanotick_${module} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(links nanotick_${module} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(links nanotick_${module} LINK_LIBRARIES)
  endif()
  set(deps "")
  foreach(link IN LISTS links)
    if(link MATCHES "^nanotick_([a-z]+)$" AND CMAKE_MATCH_1 IN_LIST NANOTICK_MODULE_LAYERS)
      list(APPEND deps ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES deps)
  set(${out} ${deps} PARENT_SCOPE)
endfunction()

function(nanotick_check_module_graph)
  set(problems "")
  set(graph "")
  set(below "")
  foreach(module IN LISTS NANOTICK_MODULE_LAYERS)
    if(module STREQUAL "fix" AND NOT NANOTICK_WITH_FIX)
      continue()  # not configured in this build (the demo's): nothing links it
    endif()
    if(NOT TARGET nanotick_${module})
      message(FATAL_ERROR "module graph: NANOTICK_MODULE_LAYERS lists '${module}' but there is no nanotick_${module}")
    endif()
    nanotick_module_links(${module} deps)
    foreach(dep IN LISTS deps)
      if(NOT dep IN_LIST below)
        string(APPEND problems "  nanotick_${module} links nanotick_${dep}, which is not below it in NANOTICK_MODULE_LAYERS\n")
      endif()
    endforeach()
    file(GLOB_RECURSE sources ${PROJECT_SOURCE_DIR}/src/${module}/*.hpp ${PROJECT_SOURCE_DIR}/src/${module}/*.cpp)
    foreach(source IN LISTS sources)
      file(STRINGS ${source} includes REGEX "^#include \"[a-z_]+/")
      foreach(line IN LISTS includes)
        string(REGEX MATCH "^#include \"([a-z_]+)/" _ "${line}")
        set(used ${CMAKE_MATCH_1})
        if(NOT used STREQUAL module AND NOT used IN_LIST deps)
          file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${source})
          string(APPEND problems "  ${rel}: ${line}, but nanotick_${module} does not link nanotick_${used}\n")
        endif()
      endforeach()
    endforeach()
    list(JOIN deps ", " deps_text)
    if(deps_text STREQUAL "")
      set(deps_text "(nothing)")
    endif()
    string(APPEND graph "${module} -> ${deps_text}\n")
    list(APPEND below ${module})
    # Everything the module reaches, through any chain of links (the modules
    # below it are done: their own reach is known).
    set(reach ${deps})
    foreach(dep IN LISTS deps)
      list(APPEND reach ${reach_${dep}})
    endforeach()
    list(REMOVE_DUPLICATES reach)
    set(reach_${module} ${reach})
  endforeach()
  foreach(rule IN LISTS NANOTICK_MODULE_NEVER)
    if(NOT rule MATCHES "^([a-z]+):([a-z]+)$")
      message(FATAL_ERROR "module graph: NANOTICK_MODULE_NEVER entry '${rule}' is not <module>:<module>")
    endif()
    set(from ${CMAKE_MATCH_1})
    set(to ${CMAKE_MATCH_2})
    foreach(m IN ITEMS ${from} ${to})
      if(NOT m IN_LIST NANOTICK_MODULE_LAYERS)
        message(FATAL_ERROR "module graph: NANOTICK_MODULE_NEVER entry '${rule}' names '${m}', which is not a module")
      endif()
    endforeach()
    if(to IN_LIST reach_${from})
      string(APPEND problems "  nanotick_${from} reaches nanotick_${to} (through its links), which "
                             "NANOTICK_MODULE_NEVER forbids ('${rule}'): ${from}/ must not depend on ${to}/\n")
    endif()
  endforeach()
  # Every module directory is on the list: a new one must be placed in the layers.
  file(GLOB dirs LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/src/*)
  foreach(dir IN LISTS dirs)
    get_filename_component(name ${dir} NAME)
    if(IS_DIRECTORY ${dir} AND NOT name IN_LIST NANOTICK_MODULE_LAYERS)
      string(APPEND problems "  src/${name} is not in NANOTICK_MODULE_LAYERS (cmake/NanotickModuleGraph.cmake)\n")
    endif()
  endforeach()
  if(NOT problems STREQUAL "")
    message(FATAL_ERROR "module graph (cmake/NanotickModuleGraph.cmake) broken:\n${problems}")
  endif()
  file(WRITE ${CMAKE_BINARY_DIR}/module_graph.txt "${graph}")
endfunction()
