# SimGrid SMPI build (-DOVL_SMPI=ON): the library, the CLI, the tests and the
# drivers of smpi/ compiled with smpicc, to be run with smpirun (docs/guides/smpi.md).
#
# Included twice from the top-level CMakeLists.txt:
#   before project(): with OVL_SMPI, make smpicc the C compiler;
#   after project():  ovl_smpi_setup() stands in for find_package(MPI):
#                     an MPI::MPI_C target (smpicc brings mpi.h and libsimgrid),
#                     the smpirun wrapper as MPIEXEC_EXECUTABLE, -DOVL_SMPI,
#                     and the drivers of smpi/.
option(OVL_SMPI "Build for SimGrid's SMPI simulator with smpicc (run with smpirun; see docs/guides/smpi.md)" OFF)

if(OVL_SMPI AND NOT OVL_SMPI_COMPILER_SET)
  find_program(OVL_SMPICC smpicc)
  if(NOT OVL_SMPICC)
    message(FATAL_ERROR "OVL_SMPI=ON needs smpicc (Debian: apt-get install libsimgrid-dev; "
                        "scripts/deps.sh installs it)")
  endif()
  set(CMAKE_C_COMPILER "${OVL_SMPICC}" CACHE FILEPATH "C compiler (SMPI)" FORCE)
  set(OVL_SMPI_COMPILER_SET ON)
endif()

function(ovl_smpi_setup)
  if(NOT OVL_SMPI)
    return()
  endif()
  find_program(OVL_SMPIRUN smpirun REQUIRED)
  execute_process(COMMAND ${OVL_SMPICC} --version OUTPUT_VARIABLE v OUTPUT_STRIP_TRAILING_WHITESPACE)
  message(STATUS "ovl: SMPI build with ${OVL_SMPICC} (${v}); run programs with smpi/smpirun.sh")
  if(NOT TARGET MPI::MPI_C)
    add_library(MPI::MPI_C INTERFACE IMPORTED GLOBAL)
    # smpicc -shared needs every symbol resolved: libsimgrid comes with smpicc.
    set_property(TARGET MPI::MPI_C PROPERTY INTERFACE_COMPILE_DEFINITIONS OVL_SMPI)
  endif()
  set(MPI_C_FOUND TRUE PARENT_SCOPE)
  set(MPI_C_LIBRARY_VERSION_STRING "SimGrid SMPI" PARENT_SCOPE)
  set(MPIEXEC_EXECUTABLE ${PROJECT_SOURCE_DIR}/smpi/smpirun.sh CACHE FILEPATH "SMPI launcher" FORCE)
  set(MPIEXEC_NUMPROC_FLAG -np CACHE STRING "" FORCE)
  # ScaLAPACK from Debian is built against a real MPI: not in the simulator.
  set(OVL_SCALAPACK_LIB OVL_SCALAPACK_LIB-NOTFOUND PARENT_SCOPE)
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL ovl_smpi_drivers)
endfunction()

# The drivers of the simulated reproductions (smpi/*.c), once the library exists.
function(ovl_smpi_drivers)
  # test_memory includes <malloc.h>, whose prototypes smpicc's malloc macros break.
  if(TARGET test_memory)
    target_compile_definitions(test_memory PRIVATE SMPI_NO_OVERRIDE_MALLOC)
  endif()
  foreach(d ssc_sim flow_sim)
    add_executable(${d} ${PROJECT_SOURCE_DIR}/smpi/${d}.c)
    target_link_libraries(${d} PRIVATE ovl)
    target_compile_definitions(${d} PRIVATE _POSIX_C_SOURCE=200809L)
    set_target_properties(${d} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  endforeach()
endfunction()
