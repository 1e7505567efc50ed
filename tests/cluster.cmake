# The emulated cluster (cluster/ovl-cluster): 4 network namespaces joined by a
# bridge over 1 Gbit/s tbf links, Open MPI across them, tiny correctness runs.
# Skips (SKIP_RETURN_CODE 77) when not root, without namespaces/veth/bridge/tbf,
# or when MPIEXEC_EXECUTABLE is not Open MPI's. Not under the sanitizers: the
# daemons and ranks run in other namespaces, and the test is about the network.
if(NOT OVL_SANITIZE)
  add_test(NAME cluster COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cluster_test.sh $<TARGET_FILE:ovl_cli>
           ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE})
  set_tests_properties(cluster PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77 ENVIRONMENT "${OVL_TEST_ENV}"
                       PROCESSORS 2 RUN_SERIAL TRUE)
endif()
