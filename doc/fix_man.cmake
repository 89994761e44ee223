# Run after doxygen: make its man(3) pages complete and safe for groff.
#   cmake -DMAN3=<dir of the .3 pages> [-DLOG=<doxygen's warning log>] -P fix_man.cmake
#
# 1. Doxygen writes a paragraph's text as is, and turns double quotes into
#    single ones, so a line that starts with a quote ("node": ... in the
#    header) becomes a troff control line ('node') and vanishes. Such lines
#    get a leading \& (a zero-width character), as troff's own pages do.
# 2. MAN_LINKS points the pages of macros and typedefs at their header's page
#    (.so man3/machine.h.3), which is not made (the headers are documented
#    by group, not by file). Those links are pointed at the group page that
#    declares the name in its synopsis.
# 3. A struct's page says "#include <metrics.h>", a header that refuses to
#    be included alone, and a group's page says nothing: both say
#    "#include <mpitopo.h>".
# 4. A group's NAME line is followed by its brief again (" - The ...");
#    NAME keeps the title alone, as whatis(1) expects.
file(GLOB _pages RELATIVE "${MAN3}" "${MAN3}/*.3")
set(_groups)
foreach(_page IN LISTS _pages)
  file(READ "${MAN3}/${_page}" _text)
  if(_text MATCHES "^\\.so ")
    continue()
  endif()
  list(APPEND _groups "${_page}")
  string(REGEX REPLACE "(^|\n)'" "\\1\\\\&'" _fixed "${_text}")
  string(REGEX REPLACE "#include <[a-z_]+\\\\&\\.h>" "#include <mpitopo\\\\&.h>" _fixed "${_fixed}")
  string(REGEX REPLACE "\n\\.SH SYNOPSIS\n\\.br\n\\.PP\n\\.SS "
         "\n.SH SYNOPSIS\n.br\n.PP\n\\\\fC#include <mpitopo\\\\&.h>\\\\fP\n.SS " _fixed "${_fixed}")
  string(REGEX REPLACE "^(\\.TH [^\n]*\n\\.ad l\n\\.nh\n\\.SH NAME\n[^\n]*)\n\\.PP\n \\\\- [^\n]*\n"
         "\\1\n" _fixed "${_fixed}")
  if(NOT _fixed STREQUAL _text)
    file(WRITE "${MAN3}/${_page}" "${_fixed}")
  endif()
endforeach()
foreach(_page IN LISTS _pages)
  file(READ "${MAN3}/${_page}" _text)
  if(NOT _text MATCHES "^\\.so man3/([^\n]*)")
    continue()
  endif()
  set(_missing "${CMAKE_MATCH_1}")
  if(EXISTS "${MAN3}/${_missing}")
    continue()
  endif()
  string(REGEX REPLACE "\\.3$" "" _name "${_page}")
  set(_target)
  foreach(_group IN LISTS _groups)
    file(STRINGS "${MAN3}/${_group}" _decl REGEX "^\\.RI \"(#define |typedef ).*\\\\fB${_name}\\\\fP")
    if(_decl)
      set(_target "${_group}")
      break()
    endif()
  endforeach()
  if(_target)
    file(WRITE "${MAN3}/${_page}" ".so man3/${_target}\n")
  else()
    message(WARNING "mpitopo: ${_page} links to the missing ${_missing} and no page declares ${_name}")
  endif()
endforeach()

# 5. Doxygen's warnings (an undocumented parameter, say) go to its log; show
#    them in the build output. The test docs.man fails while there are any.
if(LOG AND EXISTS "${LOG}")
  file(READ "${LOG}" _log)
  if(NOT _log STREQUAL "")
    message(WARNING "mpitopo: doxygen warnings on the public headers (the test docs.man fails until they are fixed):\n${_log}")
  endif()
endif()
