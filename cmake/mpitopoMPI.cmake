# Which MPI a FindMPI result is: used when mpitopo is built, to record the MPI
# it links, and by mpitopoConfig.cmake, to check that a consumer found the
# same one. Two MPIs in one process (libmpi.so and libmpich.so) abort at run
# time, so a mismatch must stop the consumer's configure instead.
#
# mpitopo_mpi_identity(<prefix>) reads MPI_C_INCLUDE_DIRS / MPI_C_HEADER_DIR
# and MPI_C_LIBRARIES (set by find_package(MPI COMPONENTS C)) and sets
#   <prefix>_NAME       "Open MPI", "MPICH" or "unknown MPI", from mpi.h
#   <prefix>_PC         the MPI's own pkg-config module (ompi-c, mpich) or ""
#   <prefix>_LIBRARIES  the real paths of the MPI library files, sorted
# in the caller's scope.
function(mpitopo_mpi_identity prefix)
  set(_name "unknown MPI")
  set(_pc "")
  foreach(_dir IN LISTS MPI_C_HEADER_DIR MPI_C_INCLUDE_DIRS MPI_C_INCLUDE_PATH)
    if(EXISTS "${_dir}/mpi.h")
      file(STRINGS "${_dir}/mpi.h" _defs REGEX "^#[ \t]*define[ \t]+(OPEN_MPI|MPICH_VERSION)[ \t]")
      if(_defs MATCHES "OPEN_MPI")
        set(_name "Open MPI")
        set(_pc ompi-c)
      elseif(_defs MATCHES "MPICH_VERSION")
        set(_name "MPICH")
        set(_pc mpich)
      endif()
      break()
    endif()
  endforeach()
  set(_libs)
  foreach(_lib IN LISTS MPI_C_LIBRARIES)
    if(IS_ABSOLUTE "${_lib}" AND EXISTS "${_lib}")
      get_filename_component(_real "${_lib}" REALPATH)
      list(APPEND _libs "${_real}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _libs)
  list(SORT _libs)
  set(${prefix}_NAME "${_name}" PARENT_SCOPE)
  set(${prefix}_PC "${_pc}" PARENT_SCOPE)
  set(${prefix}_LIBRARIES "${_libs}" PARENT_SCOPE)
endfunction()
