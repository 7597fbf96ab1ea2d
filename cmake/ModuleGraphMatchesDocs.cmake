# cmake -DDOC=<markdown> -DGRAPH=<build>/module_graph.txt -P ModuleGraphMatchesDocs.cmake
# Fails unless DOC shows the module graph the configure step checked and wrote
# (cmake/NanotickModuleGraph.cmake) verbatim in a ```text block between the
# markers <!-- module graph --> and <!-- /module graph -->: the graph a reader
# sees is the one CMake enforces.
file(READ "${DOC}" doc)
file(READ "${GRAPH}" graph)
set(open "<!-- module graph -->\n```text\n")
set(close "```\n<!-- /module graph -->")
string(FIND "${doc}" "${open}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${DOC}: no '<!-- module graph -->' marker followed by a ```text block")
endif()
string(LENGTH "${open}" open_len)
math(EXPR start "${start} + ${open_len}")
string(SUBSTRING "${doc}" ${start} -1 rest)
string(FIND "${rest}" "${close}" stop)
if(stop EQUAL -1)
  message(FATAL_ERROR "${DOC}: the module graph block has no closing ``` and <!-- /module graph -->")
endif()
string(SUBSTRING "${rest}" 0 ${stop} shown)
if(NOT shown STREQUAL graph)
  message(FATAL_ERROR "${DOC} shows another module graph than CMake's:\n${shown}\nCMake's (${GRAPH}):\n${graph}")
endif()
message(STATUS "${DOC} shows the module graph as CMake enforces it")
