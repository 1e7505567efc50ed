# The reduced demo (scripts/demo.sh --quick, tests/demo_test.sh): sections and numbers of its
# output, the picture. Its simulated part builds ssc_sim in the SMPI test's build directory
# (tests/smpi.cmake), so the two never build it at the same time; MPICH's suite skips the
# simulation (it does not depend on the MPI library and ran in Open MPI's). Not under the sanitizers.
if(OVL_SANITIZE OR OVL_SMPI)
  return()
endif()
set(OVL_DEMO_ENV ${OVL_TEST_ENV} SMPI_BUILD=${CMAKE_CURRENT_BINARY_DIR}/smpi-build)
if(OVL_MPIEXEC_VERSION MATCHES "Open MPI|OpenRTE")
  list(APPEND OVL_DEMO_ENV MPI=openmpi)
else()
  list(APPEND OVL_DEMO_ENV MPI=mpich SMPI=0)
endif()
add_test(NAME demo COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/demo_test.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:ovl_cli>
         ${CMAKE_CURRENT_BINARY_DIR}/demo.d)
math(EXPR OVL_DEMO_TIMEOUT "300 * ${OVL_TIMEOUT_SCALE}")
set_tests_properties(demo PROPERTIES TIMEOUT ${OVL_DEMO_TIMEOUT} ENVIRONMENT "${OVL_DEMO_ENV}" PROCESSORS 2
                     RESOURCE_LOCK ovl_smpi_build)
if(TEST smpi)
  set_property(TEST smpi APPEND PROPERTY RESOURCE_LOCK ovl_smpi_build)
endif()
