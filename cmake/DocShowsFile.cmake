# cmake -DDOC=<markdown> -DFILE=<file> -DOPEN=<marker> -DCLOSE=<marker> -DLANG=<fence language>
#       -P DocShowsFile.cmake
# Fails unless DOC holds FILE verbatim in a ```LANG block between the
# markers <!-- OPEN --> and <!-- /CLOSE -->, so what a reader sees in the
# docs is what the build uses: an example the tests build and run
# (OPEN "example: embed_engine.cpp", CLOSE "example"), the module graph
# CMake enforces (OPEN and CLOSE "module graph").
file(READ "${DOC}" doc)
file(READ "${FILE}" expected)
set(open "<!-- ${OPEN} -->\n```${LANG}\n")
set(close "```\n<!-- /${CLOSE} -->")
string(FIND "${doc}" "${open}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${DOC}: no '<!-- ${OPEN} -->' marker followed by a ```${LANG} block")
endif()
string(LENGTH "${open}" open_len)
math(EXPR start "${start} + ${open_len}")
string(SUBSTRING "${doc}" ${start} -1 rest)
string(FIND "${rest}" "${close}" stop)
if(stop EQUAL -1)
  message(FATAL_ERROR "${DOC}: the '${OPEN}' block has no closing ``` and <!-- /${CLOSE} -->")
endif()
string(SUBSTRING "${rest}" 0 ${stop} shown)
if(NOT shown STREQUAL expected)
  message(FATAL_ERROR "${DOC} shows another '${OPEN}' than ${FILE}; it should show:\n${expected}")
endif()
message(STATUS "${DOC} shows ${FILE} as it is")
