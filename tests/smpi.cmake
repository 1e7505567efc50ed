# SimGrid SMPI: a minimal SMPI build of the library and smpi/ssc_sim in
# <binary dir>/smpi-build, then 64 simulated ranks (a 4x4x4 grid) computing
# D^2 and D^3 with Algorithms 4 and 5 (N_DUP 1 and 3), checked against serial
# products, the same and SUMMA with lookahead in arrival order, and 16
# simulated ranks where HSUMMA at G = 1 and G = P must take SUMMA's time within 5 %, and message streams between two nodes: with the
# per-flow cap (smpirun.sh --flowcap) one stream gets the cap and two twice
# it, without it every stream count gets the link. Skipped (77) when smpicc is not installed.
# docs/guides/smpi.md.
if(OVL_SANITIZE OR OVL_SMPI)
  return()
endif()
find_program(OVL_TEST_SMPICC smpicc)
set(OVL_SMPI_TEST_DIR ${CMAKE_CURRENT_BINARY_DIR}/smpi-build)
add_test(NAME smpi COMMAND bash ${PROJECT_SOURCE_DIR}/smpi/smpi_test.sh ${PROJECT_SOURCE_DIR} ${OVL_SMPI_TEST_DIR})
set_tests_properties(smpi PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 PROCESSORS 2)

# ScaLAPACK's eigensolvers under SMPI: smpi/eig_sim (pdsyevd, pdsyevr and the
# density product) at 4 simulated ranks on data/h2o8_ccpvdz and a generated
# matrix, checked against a dense one-rank reference. Needs the ScaLAPACK that
# smpi/build_scalapack.sh makes (OVL_SMPI_SCALAPACK, default
# ~/.cache/ovl/smpi-scalapack; never built by the suite): skipped (77) without it
# or without SimGrid.
add_test(NAME smpi_eig COMMAND bash ${PROJECT_SOURCE_DIR}/smpi/eig_test.sh ${PROJECT_SOURCE_DIR}
                               ${CMAKE_CURRENT_BINARY_DIR}/smpi-eig)
set_tests_properties(smpi_eig PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
