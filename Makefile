# ibchar — plain GNU make.  Nothing here needs editing when a file is added:
#
#   impl/**/*.c            (not *_mpi.c)  -> $(BUILD)/libibchar.a
#   impl/**/*_mpi.c        per MPI found   -> $(BUILD)/<mpi>/libibchar-mpi.a
#   bench/<suite>/main.c                   -> $(BUILD)/bin/ibchar-<suite>
#   bench/<suite>/mpi.c    per MPI found   -> $(BUILD)/bin/ibchar-<suite>-<mpi>
#   bench/launch/ (ibchar-launch is the launcher): main.c -> ibchar-launch-bench,
#                  probe.c -> ibchar-launch-probe, hello_mpi.c per MPI -> ibchar-launch-hello-<mpi>
#   runner/<prog>.c                        -> $(BUILD)/bin/<prog>
#   tests/**/<name>.c      (C TAP tests)   -> $(BUILD)/tests/**/<name>.t
#   tests/**/<name>_mpi.c  per MPI found   -> $(BUILD)/tests/**/<name>-<mpi>   (run by a .t script)
#   tests/**/*.t           shell/perl TAP tests, run in place by prove
#   tests/fuzz/<name>.c    libFuzzer harness (clang) -> $(BUILD)/fuzz/<name>, corpus tests/fuzz/corpus/<name>/
#
# BUILD=dir picks the build directory; SAN=1 builds with AddressSanitizer and UBSan.

BUILD   ?= build
SAN     ?= 0
CC      ?= gcc
PROVE   ?= prove
MPIS_WANTED ?= openmpi mpich

ifeq ($(origin CC),default)
CC := gcc
endif

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wmissing-prototypes -Werror
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -pthread -MMD -MP
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif

PKGS     := libibverbs librdmacm hwloc gsl
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
GIT_REV    := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CPPFLAGS += -Iimpl -Itests/lib $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lcsv -lm -lrt

# --------------------------------------------------------------- sources ----
IMPL_SRC     := $(sort $(shell find impl -name '*.c' ! -name '*_mpi.c'))
IMPL_MPI_SRC := $(sort $(shell find impl -name '*_mpi.c'))
BENCH_MAINS  := $(filter-out bench/launch/main.c,$(sort $(wildcard bench/*/main.c)))
BENCH_MPIS   := $(sort $(wildcard bench/*/mpi.c))
RUNNER_SRC   := $(sort $(wildcard runner/*.c))
TESTLIB_SRC  := $(sort $(wildcard tests/lib/*.c))
TEST_SRC     := $(sort $(filter-out tests/lib/% tests/fuzz/%,$(shell find tests -name '*.c' ! -name '*_mpi.c')))
TEST_MPI_SRC := $(sort $(shell find tests -name '*_mpi.c'))

LIB      := $(BUILD)/libibchar.a
TESTLIB  := $(BUILD)/libtap.a
# the git revision of the build, for meta.csv: regenerated only when it changes
GITREV_C := $(BUILD)/gen/gitrev.c
IMPL_OBJ := $(IMPL_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/gitrev.o
BENCH_BIN  := $(patsubst bench/%/main.c,$(BUILD)/bin/ibchar-%,$(BENCH_MAINS)) \
	      $(BUILD)/bin/ibchar-launch-bench $(BUILD)/bin/ibchar-launch-probe
RUNNER_BIN := $(patsubst runner/%.c,$(BUILD)/bin/%,$(RUNNER_SRC))
TEST_BIN   := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%.t)

# MPIs: one build per mpicc.<name> found; a missing one is reported, not fatal.
MPIS := $(foreach m,$(MPIS_WANTED),$(if $(shell command -v mpicc.$(m) 2>/dev/null),$(m)))
MPIS_MISSING := $(filter-out $(MPIS),$(MPIS_WANTED))

.PHONY: all lib tests check check-rxe run regress deps clean mpi-report
# objects are intermediate for pattern rules; keep them so rebuilds are incremental
.SECONDARY:
all: mpi-report $(LIB) $(BENCH_BIN) $(RUNNER_BIN) mpi-all
lib: $(LIB)
tests: all $(TEST_BIN) mpi-tests

MPI_MISSING_MSG := ibchar: MPI not found, skipping its builds: $(MPIS_MISSING)
mpi-report:
	@$(if $(MPIS_MISSING),echo "$(MPI_MISSING_MSG)" >&2,true)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(GITREV_C): FORCE
	@mkdir -p $(@D)
	@echo 'const char ibc_git_rev[] = "$(GIT_REV)";' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(BUILD)/obj/gen/gitrev.o: $(GITREV_C)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

FORCE:
.PHONY: FORCE

$(LIB): $(IMPL_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(TESTLIB): $(TESTLIB_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/ibchar-%: $(BUILD)/obj/bench/%/main.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/bin/ibchar-launch-bench: $(BUILD)/obj/bench/launch/main.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/bin/ibchar-launch-probe: $(BUILD)/obj/bench/launch/probe.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# a static pattern: runner/ibchar-launch.c, not bench/launch/main.c, makes ibchar-launch
$(RUNNER_BIN): $(BUILD)/bin/%: $(BUILD)/obj/runner/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/%.t: $(BUILD)/obj/tests/%.o $(LIB) $(TESTLIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(TESTLIB) $(LIB) $(LDLIBS)

# ------------------------------------------------------------ MPI builds ----
# $(1) = mpi name.  Objects of MPI sources are compiled by mpicc.$(1) into
# $(BUILD)/$(1)/; programs link them with libibchar.a.
define MPI_RULES
MPICC_$(1) := mpicc.$(1)
MPI_LIB_$(1) := $(BUILD)/$(1)/libibchar-mpi.a
MPI_OBJ_$(1) := $(IMPL_MPI_SRC:%.c=$(BUILD)/$(1)/obj/%.o)
MPI_BENCH_$(1) := $(patsubst bench/%/mpi.c,$(BUILD)/bin/ibchar-%-$(1),$(BENCH_MPIS))
MPI_TEST_$(1) := $(patsubst tests/%_mpi.c,$(BUILD)/tests/%-$(1),$(TEST_MPI_SRC))

$(BUILD)/$(1)/obj/%.o: %.c
	@mkdir -p $$(@D)
	OMPI_CC=$(CC) MPICH_CC=$(CC) $$(MPICC_$(1)) $(CPPFLAGS) -DIBC_HAVE_MPI -DIBC_MPI_NAME='"$(1)"' $(CFLAGS) -c -o $$@ $$<

$$(MPI_LIB_$(1)): $$(MPI_OBJ_$(1))
	@mkdir -p $$(@D)
	rm -f $$@ && ar rcs $$@ $$^

$(BUILD)/bin/ibchar-%-$(1): $(BUILD)/$(1)/obj/bench/%/mpi.o $$(MPI_LIB_$(1)) $(LIB)
	@mkdir -p $$(@D)
	OMPI_CC=$(CC) MPICH_CC=$(CC) $$(MPICC_$(1)) $(CFLAGS) $(LDFLAGS) -o $$@ $$< $$(MPI_LIB_$(1)) $(LIB) $(LDLIBS)

$(BUILD)/tests/%-$(1): $(BUILD)/$(1)/obj/tests/%_mpi.o $$(MPI_LIB_$(1)) $(LIB) $(TESTLIB)
	@mkdir -p $$(@D)
	OMPI_CC=$(CC) MPICH_CC=$(CC) $$(MPICC_$(1)) $(CFLAGS) $(LDFLAGS) -o $$@ $$< $(TESTLIB) $$(MPI_LIB_$(1)) $(LIB) $(LDLIBS)

$(BUILD)/bin/ibchar-launch-hello-$(1): $(BUILD)/$(1)/obj/bench/launch/hello_mpi.o $(LIB)
	@mkdir -p $$(@D)
	OMPI_CC=$(CC) MPICH_CC=$(CC) $$(MPICC_$(1)) $(CFLAGS) $(LDFLAGS) -o $$@ $$< $(LIB) $(LDLIBS)

mpi-all: $$(MPI_BENCH_$(1)) $(BUILD)/bin/ibchar-launch-hello-$(1)
mpi-tests: $$(MPI_TEST_$(1))
endef
$(foreach m,$(MPIS),$(eval $(call MPI_RULES,$(m))))
.PHONY: mpi-all mpi-tests
mpi-all:
mpi-tests:

# ----------------------------------------------------------------- check ----
# make check: dependencies, -Werror build, every TAP test under prove, then the
# C unit tests again under ASan/UBSan.  prove's summary line ends the run.
export IBC_BUILD := $(abspath $(BUILD))

deps:
	scripts/install-deps.sh

check: deps
	$(MAKE) --no-print-directory tests
	$(MAKE) --no-print-directory fuzz-build
	$(MAKE) --no-print-directory BUILD=$(BUILD)-asan SAN=1 tests-unit
	IBC_BUILD=$(abspath $(BUILD)) IBC_BUILD_ASAN=$(abspath $(BUILD)-asan) \
	  $(PROVE) -r $(PROVE_FLAGS) $(BUILD)/tests tests $(BUILD)-asan/tests

tests-unit: $(TEST_BIN)
.PHONY: tests-unit

# Verbs tests inside a Soft-RoCE QEMU guest (one guest, then two).
check-rxe: deps
	$(MAKE) --no-print-directory tests
	scripts/check-rxe.sh

run: deps
	$(MAKE) --no-print-directory all
	scripts/make-run.sh

# The Soft-RoCE regression suites against results/baselines/softroce/
# (scripts/regress.sh --update makes a new baseline).
regress: deps
	$(MAKE) --no-print-directory all
	scripts/regress.sh

# ----------------------------------------------------------------- fuzz ----
# libFuzzer harnesses (tests/fuzz/<name>.c) built by clang with ASan and UBSan
# against an instrumented copy of libibchar.  make fuzz runs each for
# FUZZ_SECONDS; make check runs each over its committed corpus
# (tests/fuzz/corpus.t), skipping with the reason when clang is missing.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD   := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -O1 -g -std=gnu11 -pthread -MMD -MP -Wall -Wno-unused-command-line-argument $(FUZZ_SAN)
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/*.c))
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB     := $(FUZZ_BUILD)/libibchar-fuzz.a
FUZZ_OBJ     := $(IMPL_SRC:%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/gen/gitrev.o

$(FUZZ_BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/obj/gen/gitrev.o: $(GITREV_C)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_BUILD)/%: tests/fuzz/%.c $(FUZZ_LIB)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LDLIBS)

.PHONY: fuzz fuzz-build
fuzz-build:
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then $(MAKE) --no-print-directory $(FUZZ_BIN); \
	 else echo "ibchar: $(FUZZ_CC) not found, the fuzz harnesses are not built" >&2; fi

fuzz: deps
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || \
	  { echo "ibchar: make fuzz needs $(FUZZ_CC) (scripts/install-deps.sh installs it)" >&2; exit 1; }
	$(MAKE) --no-print-directory $(FUZZ_BIN)
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh run $(FUZZ_BUILD)

clean:
	rm -rf build build-* 

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
