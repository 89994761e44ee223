# Make the man(1) page of a tool with help2man, from its --help and --version.
#   cmake -DHELP2MAN=<help2man> -DTOOL=<executable> -DNAME=<name line>
#         -DVERSION=<version> -DOUT=<page> [-DSUBCOMMANDS=ON] -P help2man.cmake
# The version is given, not read from --version: the tools print more there
# (the optional mappers, the MPI library), which belongs to no section.
# With SUBCOMMANDS, the help of every command listed under "Commands:" in
# --help ('TOOL help COMMAND') is added as a section, so the page holds every
# option of every command.
get_filename_component(_prog "${TOOL}" NAME)
set(_include)
if(SUBCOMMANDS)
  set(_include "${OUT}.h2m")
  file(WRITE "${_include}" "")
  execute_process(COMMAND "${TOOL}" --help OUTPUT_VARIABLE _help RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${TOOL} --help failed (${_rc})")
  endif()
  # The command lines of the block: two blanks, then the name.
  string(REGEX MATCH "\nCommands:\n([^\n]+\n)+" _block "${_help}")
  string(REGEX MATCHALL "\n  [a-z][a-z0-9-]* " _cmds "${_block}")
  file(APPEND "${_include}" "[COMMANDS IN DETAIL]\n")
  foreach(_cmd IN LISTS _cmds)
    string(STRIP "${_cmd}" _cmd)
    if(_cmd STREQUAL "help")
      continue()
    endif()
    execute_process(COMMAND "${TOOL}" help ${_cmd} OUTPUT_VARIABLE _text RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "${TOOL} help ${_cmd} failed (${_rc})")
    endif()
    # Verbatim in roff: backslashes escaped, no line read as a request.
    string(REPLACE "\\" "\\e" _text "${_text}")
    string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" _text "${_text}")
    file(APPEND "${_include}" ".SS \"${_prog} ${_cmd}\"\n.nf\n${_text}.fi\n")
  endforeach()
  set(_include "--include=${_include}")
endif()
execute_process(COMMAND "${HELP2MAN}" --no-info --section=1 "--name=${NAME}"
                        "--version-string=${VERSION}"
                        ${_include} "--output=${OUT}" "${TOOL}"
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "help2man failed for ${TOOL} (${_rc})")
endif()
