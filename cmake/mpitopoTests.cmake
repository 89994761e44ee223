# The policy every directory of tests/ applies to the tests it registers
# (mpitopo_test_policy(), deferred to the end of the directory by
# mpitopo_tests_begin()):
#
# - Timeouts from measured times. tests/timings.txt holds "SECONDS NAME"
#   lines, the time each test took in a recorded run of scripts/test.sh
#   (scripts/test.sh --record-times rewrites it); a test's TIMEOUT is three
#   times its time, at least 60 s. A test with no recorded time keeps the
#   TIMEOUT its directory gave, or 300 s.
# - MPI tests run one at a time, alone. Every test that launches MPI
#   processes (labels mpi, package, examples) holds the resource lock
#   mpitopo_mpi and asks for every core (PROCESSORS MPITOPO_TEST_CORES, the
#   machine's count): `ctest -j N` runs the MPI-free tests (unit, cli, fuzz,
#   fabric, simgrid, docs) N at a time and each oversubscribed MPI job on its
#   own. (Beside a busy MPI-free test, an Open MPI job of 9 processes on 2
#   cores ran 3 to 30 times slower: the sum of the MPI tests grew from about
#   200 s to 760 s.)
# - Long cases carry the label `full` (scripts/test.sh --full runs them;
#   the standard run excludes them with -LE full). A directory marks them
#   when it registers them: mpitopo_test_full(NAME...).

cmake_host_system_information(RESULT _mpitopo_cores QUERY NUMBER_OF_LOGICAL_CORES)
set(MPITOPO_TEST_CORES ${_mpitopo_cores} CACHE STRING "Cores an MPI test holds (PROCESSORS)")
set(MPITOPO_TEST_TIMINGS "${PROJECT_SOURCE_DIR}/tests/timings.txt" CACHE FILEPATH
    "Measured test times (SECONDS NAME lines) the tests' timeouts are sized from")

# Read the recorded times once per configure into MPITOPO_TIME_<name>
# variables of the calling scope (tests/CMakeLists.txt: every subdirectory
# inherits them).
macro(mpitopo_tests_load_timings)
  if(EXISTS "${MPITOPO_TEST_TIMINGS}")
    file(STRINGS "${MPITOPO_TEST_TIMINGS}" _mpitopo_timing_lines REGEX "^[0-9]")
    foreach(_l IN LISTS _mpitopo_timing_lines)
      if(_l MATCHES "^([0-9.]+)[ \t]+([^ \t]+)$")
        set("MPITOPO_TIME_${CMAKE_MATCH_2}" "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${MPITOPO_TEST_TIMINGS}")
  endif()
endmacro()

# Mark tests of the current directory as long (label `full`).
function(mpitopo_test_full)
  foreach(_t IN LISTS ARGN)
    set_property(TEST ${_t} APPEND PROPERTY LABELS full)
  endforeach()
endfunction()

function(mpitopo_test_policy)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_t IN LISTS _tests)
    get_test_property(${_t} LABELS _labels)
    if(DEFINED "MPITOPO_TIME_${_t}")
      # 3x the recorded time, rounded up, at least 60 s (integer ms math).
      string(REGEX MATCH "^([0-9]*)\\.?([0-9]*)$" _m "${MPITOPO_TIME_${_t}}")
      set(_s "${CMAKE_MATCH_1}")
      string(SUBSTRING "${CMAKE_MATCH_2}000" 0 3 _ms)
      if(_s STREQUAL "")
        set(_s 0)
      endif()
      math(EXPR _timeout "(3 * (${_s} * 1000 + 1${_ms} - 1000) + 999) / 1000")
      if(_timeout LESS 60)
        set(_timeout 60)
      endif()
      set_property(TEST ${_t} PROPERTY TIMEOUT ${_timeout})
    else()
      get_test_property(${_t} TIMEOUT _timeout)
      if(NOT _timeout)
        set_property(TEST ${_t} PROPERTY TIMEOUT 300)
      endif()
    endif()
    if(_labels MATCHES "(^|;)(mpi|package|examples)(;|$)")
      set_property(TEST ${_t} APPEND PROPERTY RESOURCE_LOCK mpitopo_mpi)
      set_property(TEST ${_t} PROPERTY PROCESSORS ${MPITOPO_TEST_CORES})
    endif()
  endforeach()
endfunction()

# At the top of a tests/ directory: apply the policy when it ends.
macro(mpitopo_tests_begin)
  cmake_language(DEFER CALL mpitopo_test_policy)
endmacro()
