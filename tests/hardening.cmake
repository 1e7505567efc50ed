# Hardening suite (docs/lab/reliability.md): bad input, faults, fuzzing, valgrind.
# Included from tests/CMakeLists.txt. Fuzzing and valgrind run in the release
# build only (not under OVL_SANITIZE); the bad-input test and the replay of
# the fuzz corpora and regression inputs run in both builds.

# The fuzz targets built with the compiler of the build and a plain main()
# that replays files: the seed corpus and every committed crash input.
foreach(t sidecar mtx opts)
  add_executable(hard_fuzz_replay_${t} ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${t}.c ${PROJECT_SOURCE_DIR}/fuzz/replay_main.c)
  target_link_libraries(hard_fuzz_replay_${t} PRIVATE ovl)
  target_include_directories(hard_fuzz_replay_${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(hard_fuzz_replay_${t} PRIVATE _POSIX_C_SOURCE=200809L)
  # fuzz/regressions/<t> exists once a crash of that target has been found
  set(OVL_FUZZ_DIRS ${PROJECT_SOURCE_DIR}/fuzz/corpus/${t})
  if(EXISTS ${PROJECT_SOURCE_DIR}/fuzz/regressions/${t})
    list(APPEND OVL_FUZZ_DIRS ${PROJECT_SOURCE_DIR}/fuzz/regressions/${t})
  endif()
  add_test(NAME hard_fuzz_replay_${t} COMMAND hard_fuzz_replay_${t} ${OVL_FUZZ_DIRS})
  set_tests_properties(hard_fuzz_replay_${t} PROPERTIES TIMEOUT 60 ENVIRONMENT "${OVL_TEST_ENV}")
endforeach()

# Bad input, one case each, on 1 and 2-4 ranks.
math(EXPR OVL_HARD_BAD_TIMEOUT "600 * ${OVL_TIMEOUT_SCALE}")
add_test(NAME hard_bad_input COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bad_input_test.sh $<TARGET_FILE:ovl_cli>
         ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE} ${OVL_MPIEXEC_FLAGS})
# Under the sanitizers every third case runs, once, on its largest rank
# count (the release build runs them all on every rank count; the suite's
# 20-minute budget on 2 cores does not hold all of them under ASan).
set(OVL_HARD_BAD_ENV ${OVL_TEST_ENV})
if(OVL_SANITIZE)
  list(APPEND OVL_HARD_BAD_ENV OVL_BAD_INPUT_LAST_NP=1 OVL_BAD_INPUT_STRIDE=3)
endif()
set_tests_properties(hard_bad_input PROPERTIES TIMEOUT ${OVL_HARD_BAD_TIMEOUT} ENVIRONMENT "${OVL_HARD_BAD_ENV}" PROCESSORS 2)

# Random arguments for every sub-command, seeded (the seed is printed;
# OVL_RANDOM_SEED=S reproduces a run): exit codes 0, 1 or 2 only, no hang,
# no sanitizer report, nothing left behind by a failure. The sanitizer build
# runs fewer cases (a run there costs about three times the CPU) so that the
# test adds about a minute to that suite.
if(OVL_SANITIZE)
  set(OVL_RANDOM_COUNT 24 CACHE STRING "random-argument cases in the test suite")
else()
  set(OVL_RANDOM_COUNT 100 CACHE STRING "random-argument cases in the test suite")
endif()
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME hard_random_args COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/random_args_test.py
           $<TARGET_FILE:ovl_cli> ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE} ${OVL_MPIEXEC_FLAGS})
  math(EXPR OVL_HARD_RANDOM_TIMEOUT "600 * ${OVL_TIMEOUT_SCALE}")
  set_tests_properties(hard_random_args PROPERTIES TIMEOUT ${OVL_HARD_RANDOM_TIMEOUT} PROCESSORS 2
                       ENVIRONMENT "${OVL_TEST_ENV};OVL_RANDOM_COUNT=${OVL_RANDOM_COUNT}")
  # The table of test_random_api names every function of the public headers,
  # and the library exports every one of them that is not static inline (Python over the headers and
  # the symbol table: not under the sanitizers).
  if(TARGET ovl_shared AND NOT OVL_SANITIZE)
  add_test(NAME hard_api_list COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/api_list_check.py
           ${PROJECT_SOURCE_DIR}/include/ovl $<TARGET_FILE:ovl_shared> ${CMAKE_CURRENT_SOURCE_DIR}/test_random_api.c
           ${CMAKE_CURRENT_SOURCE_DIR}/random_api_table.h)
  endif()
endif()

if(NOT OVL_SANITIZE)
  # A bounded libFuzzer run (clang; skipped with a message when missing).
  set(OVL_FUZZ_SECONDS 12 CACHE STRING "seconds of fuzzing per target in the test suite")
  # the MPI and libraries of this build, for fuzz/build.sh (clang links libovl.a)
  set(OVL_FUZZ_CFLAGS)
  foreach(d ${MPI_C_INCLUDE_DIRS})
    string(APPEND OVL_FUZZ_CFLAGS " -I${d}")
  endforeach()
  # (ScaLAPACK only when found: a build without it links no placeholder)
  set(OVL_FUZZ_LIBS)
  foreach(l ${MPI_C_LIBRARIES} ${OVL_SCALAPACK_LIB} ${OVL_CJSON_LIB} ${OVL_LAPACKE_LIB} ${OVL_LAPACK_LIB} ${OVL_BLAS_LIB} ${OVL_M_LIB})
    if(l AND NOT l MATCHES "-NOTFOUND$")
      string(APPEND OVL_FUZZ_LIBS " ${l}")
    endif()
  endforeach()
  add_test(NAME hard_fuzz COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_test.sh ${CMAKE_BINARY_DIR}/fuzz
           $<TARGET_FILE:ovl> ${OVL_FUZZ_SECONDS})
  math(EXPR OVL_HARD_FUZZ_TIMEOUT "3 * ${OVL_FUZZ_SECONDS} + 120")
  set_tests_properties(hard_fuzz PROPERTIES TIMEOUT ${OVL_HARD_FUZZ_TIMEOUT} SKIP_RETURN_CODE 77
                       ENVIRONMENT "${OVL_TEST_ENV};OVL_FUZZ_CFLAGS=${OVL_FUZZ_CFLAGS};OVL_FUZZ_LIBS=${OVL_FUZZ_LIBS}")
endif()

# The faults and signals below end jobs in the middle of the iterations: mpiexec's default grace between
# SIGTERM and SIGKILL to the other ranks (tests/CMakeLists.txt: OVL_MPI_TEST_ENV)
set(OVL_TEST_ENV_KILL ${OVL_TEST_ENV})
list(FILTER OVL_TEST_ENV_KILL EXCLUDE REGEX "^OMPI_MCA_odls_base_sigkill_timeout=")

if(NOT OVL_SANITIZE)
  # Faults injected into running jobs: signals, kill -9 of a rank, a full disk.
  math(EXPR OVL_HARD_FAULT_TIMEOUT "400 * ${OVL_TIMEOUT_SCALE}")
  add_test(NAME hard_faults COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fault_test.sh $<TARGET_FILE:ovl_cli>
           ${MPIEXEC_EXECUTABLE} ${OVL_MPIEXEC_FLAGS})
  set_tests_properties(hard_faults PROPERTIES TIMEOUT ${OVL_HARD_FAULT_TIMEOUT} ENVIRONMENT "${OVL_TEST_ENV_KILL}"
                       PROCESSORS 2)
endif()

if(NOT OVL_SANITIZE AND Python3_Interpreter_FOUND)
  # A first signal ends `ovl purify` within a bounded time in every phase,
  # also with rank 0 blocked (tests/hard_block.c, preloaded: a write or a
  # check that does not end; a full pipe): exit 128 + N, earlier outputs
  # byte-identical, no temporary left.
  add_library(hard_block SHARED hard_block.c)
  target_link_libraries(hard_block PRIVATE MPI::MPI_C ${OVL_LAPACKE_LIB} ${CMAKE_DL_LIBS})
  target_include_directories(hard_block PRIVATE ${OVL_LAPACKE_INCLUDE})
  math(EXPR OVL_HARD_SIGNAL_TIMEOUT "300 * ${OVL_TIMEOUT_SCALE}")
  add_test(NAME hard_signals COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/signal_test.py
           $<TARGET_FILE:ovl_cli> $<TARGET_FILE:hard_block> ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE}
           ${OVL_MPIEXEC_FLAGS})
  set_tests_properties(hard_signals PROPERTIES TIMEOUT ${OVL_HARD_SIGNAL_TIMEOUT} ENVIRONMENT "${OVL_TEST_ENV_KILL}"
                       PROCESSORS 2)
endif()

if(NOT OVL_SANITIZE)
  # valgrind memcheck over three MPI runs, with MPI handle accounting
  # (tests/hard_handles.c, preloaded: communicators, windows, requests,
  # datatypes and files balance to zero at MPI_Finalize).
  add_library(hard_handles SHARED hard_handles.c)
  target_link_libraries(hard_handles PRIVATE MPI::MPI_C ${CMAKE_DL_LIBS})
  math(EXPR OVL_HARD_VG_TIMEOUT "900 * ${OVL_TIMEOUT_SCALE}")
  add_test(NAME hard_valgrind COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/valgrind_test.sh $<TARGET_FILE:ovl_cli>
           $<TARGET_FILE:hard_handles> ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE} ${OVL_MPIEXEC_FLAGS})
  set_tests_properties(hard_valgrind PROPERTIES TIMEOUT ${OVL_HARD_VG_TIMEOUT} ENVIRONMENT "${OVL_TEST_ENV}"
                       PROCESSORS 2 SKIP_RETURN_CODE 77)
endif()

# Every writer against symlinks, FIFOs and directories planted at every name
# it could use (the targets, and the temporaries' names of earlier versions
# for every pid of a run in a new PID namespace). Release build only.
if(NOT OVL_SANITIZE)
  math(EXPR OVL_HARD_SAFE_WRITE_TIMEOUT "600 * ${OVL_TIMEOUT_SCALE}")
  add_test(NAME hard_safe_write COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/safe_write_test.sh $<TARGET_FILE:ovl_cli>
           ${PROJECT_SOURCE_DIR}/tools/ovl-plot ${PROJECT_SOURCE_DIR}/data ${MPIEXEC_EXECUTABLE} ${OVL_MPIEXEC_FLAGS})
  set_tests_properties(hard_safe_write PROPERTIES TIMEOUT ${OVL_HARD_SAFE_WRITE_TIMEOUT} ENVIRONMENT "${OVL_TEST_ENV}"
                       PROCESSORS 2)
endif()
