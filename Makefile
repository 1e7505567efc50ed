# ovl: the two commands.
#   make demo   runs the main job and shows each claim where this machine can: purification of real Fock
#               matrices, Algorithm 5 vs 4 here and on a simulated cluster (SMPI), purification vs the
#               eigensolver on 1 rank x 2 threads, and a picture (build first if needed; docs/guides/demo.md)
#   make test   runs the whole test suite (release build + ASan/UBSan build; and MPICH's release suite)
#   make data   makes the big Fock-matrix cases of data/big/ (PySCF, hours) and checks their checksums
#   make data-tb makes the tight-binding cases of data/big/ (tblite GFN2-xTB, n ~ 1000-8000) and checks them
#   make data-sparse makes the sparse tight-binding cases (tblite GFN1-xTB, periodic replication, n ~ 1000-
#     65536) in ~/.cache/ovl/sparse-cases (or $OVL_SPARSE_CASES), outside git, and checks them
# Both install missing Debian packages first (as root). MPI=mpich selects MPICH.
MPI ?= openmpi
ifeq ($(MPI),mpich)
  MPICC := /usr/bin/mpicc.mpich
  MPIEXEC := /usr/bin/mpiexec.mpich
  BUILD ?= build-mpich
else
  MPICC := /usr/bin/mpicc.openmpi
  MPIEXEC := /usr/bin/mpiexec.openmpi
  BUILD ?= build
endif
ASAN_BUILD := $(BUILD)-asan
JOBS ?= 2
CMAKE_MPI := -DMPI_C_COMPILER=$(MPICC) -DMPIEXEC_EXECUTABLE=$(MPIEXEC)
CTEST := ctest --output-on-failure -j $(JOBS)

.PHONY: all deps build build-asan demo test test-release test-asan test-mpich clean data data-tb data-sparse

all: build

deps:
	@bash scripts/deps.sh $(MPI)
ifeq ($(MPI),openmpi)
	@bash scripts/deps-python.sh
endif

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVL_WERROR=ON $(CMAKE_MPI)

$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DOVL_SANITIZE=ON -DOVL_WERROR=ON $(CMAKE_MPI)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)

demo: build
	@MPI=$(MPI) OVL=$(BUILD)/ovl JOBS=$(JOBS) bash scripts/demo.sh

test-release: build
	cd $(BUILD) && $(CTEST)

test-asan: build-asan
	cd $(ASAN_BUILD) && $(CTEST)

# `make test` (Open MPI) also runs MPICH's release suite, less the tests that
# do not exercise the MPI library (source format, layers, docs links, data checksums, JSON,
# the parsers' fuzzing and random arguments, the pure cost model, SMPI's simulator, the list of
# public functions, the knob table and its documents, the struct layouts, valgrind's memory check
# of ovl's own code) or only repeat its paths (the sweep of every method for
# symmetric results: ovl_dmat_symmetrize's exchange is test_dmat's; SP2-ACC's steps, stopping rule and
# fallback, 18 of whose 23 runs are on 1 rank, its products purify's): those
# run once, above. MPICH's sanitizer suite is `MPI=mpich make test-asan` (docs/guides/mpi.md).
MPICH_ONCE := ^(format|check_layers|check_layers_selftest|docs_links|docs_links_selftest|data_test|ovlrecords|test_json|test_model_np1|test_cost_np1|model|smpi|smpi_eig|hard_fuzz|hard_fuzz_replay_.*|hard_api_list|hard_random_args|hard_valgrind|purify_symmetric|sp2acc|knob_walk|cli_doc|check_defaults|check_defaults_selftest|schema_nompi|validate_models_smoke|layout|tb_case|sparse_cases)$$

test-mpich:
	@$(MAKE) --no-print-directory MPI=mpich build
	cd build-mpich && $(CTEST) -E '$(MPICH_ONCE)'

test: test-release test-asan $(if $(filter openmpi,$(MPI)),test-mpich)
	@echo "ovl: all test suites passed ($(MPI)$(if $(filter openmpi,$(MPI)), and MPICH's release suite))"

data:
	@bash scripts/deps-data.sh
	OMP_NUM_THREADS=1 nice -n 19 tools/make-cases --all

data-tb:
	@bash scripts/deps-tb.sh
	OMP_NUM_THREADS=1 nice -n 19 tools/make-cases --tb

data-sparse:
	@bash scripts/deps-tb.sh
	OMP_NUM_THREADS=1 nice -n 19 tools/make-sparse-cases --all
	tools/make-sparse-cases --check

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
