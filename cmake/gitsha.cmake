# cmake -DSRC=<source dir> -DOUT=<header> -P cmake/gitsha.cmake — writes the git SHA of the
# source tree as MMP_GIT_SHA into OUT at every build ("-dirty" when tracked files differ from
# HEAD, "unknown" outside git); the file is rewritten only when the value changes, so an
# unchanged tree rebuilds nothing. Reports name the code that made them, not the last configure.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT sha)
  set(sha unknown)
else()
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SRC} RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    set(sha "${sha}-dirty")
  endif()
endif()
set(text "#define MMP_GIT_SHA \"${sha}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
