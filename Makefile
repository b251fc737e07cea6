# Thin wrapper over CMake. `make` builds, `make test` builds and runs every
# test, `make demo` builds and shows what onic does (ending with the quick
# benchmark suite), `make bench` runs the whole suite against MPICH and Open
# MPI. SANITIZE=address,undefined builds a separate tree with those sanitizers.
SANITIZE ?=
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
comma    := ,
BUILD    ?= build$(if $(SANITIZE),-$(subst $(comma),-,$(SANITIZE)))
DEPS_OK  := $(BUILD)/.deps-ok

PREFIX   ?= /usr/local
# The suite runs under Debian's python3, where python3-matplotlib installs.
PYTHON   ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
# Extra arguments for make demo's benchmark suite (CI: --runs 1).
DEMO_SUITE_FLAGS ?=

.PHONY: all build test test-rtl-long mpich demo bench bench-deps deps clean install fuzz

all: build

deps: $(DEPS_OK)
$(DEPS_OK): scripts/install-deps.sh
	./scripts/install-deps.sh
	@mkdir -p $(BUILD) && touch $@

# Under ThreadSanitizer only the tests that start threads run (TEST_SEL
# below), so only they are built.
build: deps
	cmake -S . -B $(BUILD) -DONIC_SANITIZE=$(SANITIZE) >/dev/null
	cmake --build $(BUILD) -j $(JOBS) $(if $(findstring thread,$(SANITIZE)),--target onic_thread_tests)

# Sanitized runs leave out leaks inside other projects' libraries (the file
# says which); launchers pass the environment on to the processes.
SAN_ENV := $(if $(SANITIZE),LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp)
# ThreadSanitizer runs the tests that start threads (label threads,
# tests/CMakeLists.txt): the library starts none, and TSan sees nothing
# between processes.
# MPICH's suite in full is `make mpich`'s, not `make test`'s (label mpich_full).
# Under ASan and UBSan the MPI suite runs with the default engine only: its
# repeats with the other matching engines (label engines) run the same MPI
# and Portals code, and the engines themselves run under the sanitizers in
# the in-process match and match_diff tests; CI's 20 minutes lack their time.
# The same for the other launchers: the sanitized runs start jobs through
# Open MPI's mpirun (PMIx) and Hydra (PMI-1) in launchers_startup alone, not
# the whole suite under them and across two hosts (label launchers_full);
# the plain run has those, and leaves launchers_startup, a part of them, out.
# The RTL co-simulation's long run (label rtl_long) is test-rtl-long's.
# Tests about what is around the library (job control through onicrun,
# an install, the benchmark scripts' output: label no_sanitizers) run in the
# plain run only; the library code they drive is the other tests'.
TEST_SEL := $(if $(findstring thread,$(SANITIZE)),-L threads,-LE $(if $(SANITIZE),'mpich_full|engines|launchers_full|rtl_long|no_sanitizers','mpich_full|launchers_startup|rtl_long'))

test: build
	cd $(BUILD) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) $(TEST_SEL)

# The ALPU's RTL against onic's C unit, a million operations per
# configuration (hw/CMakeLists.txt; make test runs 50,000 of each): about
# 120 s of CPU; CI runs it beside the fuzzer (.ci/run).
test-rtl-long: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L rtl_long

# MPICH's own test suite in full (tests/mpich/mpich_suite.sh), with onic and,
# for comparison, with Debian's MPICH: ctest label mpich_full (an hour or more).
mpich: build
	cmake -S . -B $(BUILD) -DONIC_MPICH_FULL=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -L mpich_full

# MPICH, Open MPI and matplotlib for the suite; what cannot be installed is
# left out of the report, which says so.
bench-deps:
	./scripts/install-deps.sh bench

# The papers' benchmarks, onic against MPICH and Open MPI: results/<date>/.
bench: build bench-deps
	$(PYTHON) bench/suite.py --build $(BUILD)

demo: build bench-deps
	$(BUILD)/onic-info
	@echo
	$(BUILD)/onicc -show examples/ring.c -o $(BUILD)/ring
	$(BUILD)/onicc -O2 examples/ring.c -o $(BUILD)/ring
	$(BUILD)/onicc -O2 examples/pingpong.c -o $(BUILD)/pingpong
	$(BUILD)/onicc -O2 examples/halo.c -o $(BUILD)/halo
	$(BUILD)/onicrun -n 2 --timeout 60 $(BUILD)/ring
	$(BUILD)/onicrun -n 4 --timeout 60 $(BUILD)/ring
	$(BUILD)/onicrun -n 4 --timeout 60 $(BUILD)/halo
	$(BUILD)/onicrun -n 2 --timeout 120 $(BUILD)/pingpong
	$(BUILD)/onicrun -n 4 --timeout 120 $(BUILD)/pingpong
	@echo
	$(BUILD)/onic-bench-match --quick
	@echo
	@# The limit is for a job that hangs: two pinned processes that spin on
	@# each other slow down by tens of times when other work shares the cores.
	$(BUILD)/onicrun -n 2 --bind core --timeout 600 $(BUILD)/onic-bench-xport --quick \
	    --csv-file $(BUILD)/demo-floors-xport.csv
	@echo
	$(PYTHON) bench/suite.py --quick --build $(BUILD) --xport-csv $(BUILD)/demo-floors-xport.csv \
	    $(DEMO_SUITE_FLAGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# A libFuzzer target (clang, ASan), FUZZ_SECONDS long: FUZZ_TARGET ptl (the
# Portals target side) or trace (the match-trace reader and replay).
FUZZ_SECONDS ?= 60
FUZZ_TARGET  ?= ptl
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGET)

clean:
	rm -rf build build-*
