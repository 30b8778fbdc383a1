# prof - build, test and install.
#
#   make            libprof.a, libprof.so and the prof binary, in build/ (libprof's
#                   two libraries define nothing but the API of include/: see LIB_SRC)
#   make check      install missing dependencies, build the plain flavour, run every
#                   kind of test once with it (unit, command line, PyTorch, browser,
#                   the fuzz corpora), the suites in parallel on all cores
#   make check-all  check, plus the unit and command-line tests under
#                   AddressSanitizer+UBSan, the threaded units under ThreadSanitizer,
#                   the clang build and libFuzzer's replay of the corpora (CI runs this)
#   make check-gpu  the GPU check of tests/gpu/ (SKIPPED without a GPU); make gpu-bundle
#                   first fetches what it builds with, for a machine without a registry
#   make demo       install what building needs, build, show testdata/demo.prof
#   make bench      benchmarks, printed as ratios measured in one run
#   make fuzz       explore with libFuzzer for FUZZ_SECONDS (default 60) per target
#   make install    PREFIX=/usr/local DESTDIR=: binary, libraries, headers, prof.pc, man pages,
#                   the Python package (under lib/prof/python, where prof record finds it)
#   make deps       check the Debian packages; install the missing ones (root) or
#                   print the apt-get command (deps-build: only what building needs)
#   make clean
#
# Knobs: V=1 shows commands; CC=clang builds with clang; OPT= overrides -O2 -g;
#        CFLAGS and LDFLAGS are added to the compiler's and (libprof, prof) the linker's;
#        JOBS (default: the number of cores) is how many jobs the test tiers run at once.
#        CUDA_HOME (default /usr/local/cuda) is where CUPTI's headers are looked for.

CC      ?= cc
FUZZCC  ?= clang
PREFIX  ?= /usr/local
DESTDIR ?=
OPT     ?= -O2 -g
B       := build

WARN    := -Wall -Wextra -Werror -Wshadow -Wconversion
# CUDA: with CUPTI's headers under CUDA_HOME, src/record/cupti.c is built in;
# libcupti and the driver are loaded with dlopen at run time, so libprof
# needs no CUDA library to link or run. CUDA_HOME=/none builds without.
CUDA_HOME ?= /usr/local/cuda
ifneq ($(wildcard $(CUDA_HOME)/include/cupti.h),)
CUPTI_CFLAGS := -DPROF_HAVE_CUPTI -isystem $(CUDA_HOME)/include \
	-DPROF_CUPTI_LIB='"$(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so \
	$(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so) libcupti.so)"'
endif
# libmicrohttpd is loaded by `prof view` alone (src/output/mhd_api.h), under
# the run-time name of the library it is built against
MHD_SONAME := $(shell objdump -p "$$(pkg-config --variable=libdir libmicrohttpd 2>/dev/null)/libmicrohttpd.so" \
	2>/dev/null | sed -n 's/^ *SONAME *//p')
MHD_CFLAGS := $(if $(MHD_SONAME),-DPROF_MHD_SONAME='"$(MHD_SONAME)"')
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Isrc -Itests/support -MMD -MP -pthread $(CUPTI_CFLAGS) \
	$(MHD_CFLAGS) $(CFLAGS)
LIBS    := -lzstd -lcjson -lpthread -lm
# tests/support writes Nsight exports for the importer's tests (nsys_fixture.c)
SUP_LIBS := -lsqlite3
# the importers: YAJL streams JSON, zlib inflates .gz, SQLite reads Nsight exports
TOOL_LIBS := -lgsl -lgslcblas -lyajl -lz -lsqlite3 -ldl
ASAN    := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN    := -O1 -g -fsanitize=thread

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The recording library: codec + runtime, and the helpers of src/util they
# use (LIB_UTIL); the preload constructor goes into libprof.so only. The
# tool code (model, analysis, output, import, the other helpers) is linked
# into prof only, never into training programs. The library's objects are
# compiled with hidden visibility: the headers of include/ make the API
# visible, libprof.so exports that alone, and libprof.a has every other
# symbol made local (below).
LIB_UTIL := src/util/crc32c.c src/util/error.c src/util/hmap.c src/util/planted.c src/util/pool.c \
            src/util/vec.c
LIB_SRC  := $(sort $(LIB_UTIL) $(wildcard src/format/*.c) \
	$(filter-out src/record/preload.c,$(wildcard src/record/*.c)))
PRELOAD_SRC := src/record/preload.c
SO_SRC   := $(LIB_SRC) $(PRELOAD_SRC)
TOOL_SRC := $(sort $(filter-out $(LIB_UTIL),$(wildcard src/util/*.c)) \
	$(wildcard src/model/*.c src/analysis/*.c src/output/*.c src/import/*.c src/query/*.c))
# The dashboard's page (viewer/) is compiled into prof by tools/embed.sh;
# its script is joined from its parts, in this order, by tools/viewer_js.sh.
VIEWER_JS := $(addprefix viewer/js/,dom.js charts.js summary.js series.js calls.js timeline.js \
	compare.js main.js)
VIEWER_FILES := viewer/index.html viewer/app.css $(B)/gen/app.js
TOOL_SRC += $(B)/gen/viewer_assets.c
# sketch_bucket's tables, made from its definition by tools/sketch_table.c.
TOOL_SRC += $(B)/gen/sketch_table.c
CMD_SRC  := $(sort $(wildcard cmd/prof/*.c))
SUP_SRC  := $(sort $(wildcard tests/support/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
# the units with threads of their own: the recorder's, the reader's producer
# (format_batch_fn: a function run on it; model_threads: the model built on both),
# the Kineto importer's event thread (import_kineto_fast) and the report's leak
# fits (analysis_threads)
TSAN_UNITS := $(sort $(wildcard tests/unit/record_thread*.c tests/unit/format_prefetch.c \
	tests/unit/format_batch_fn.c tests/unit/format_slim.c tests/unit/model_threads.c \
	tests/unit/import_kineto_fast.c tests/unit/analysis_threads.c tests/unit/util_pool.c))
TSAN_TOOL_UNITS := $(B)/tsan/tests/unit/model_threads $(B)/tsan/tests/unit/import_kineto_fast \
	$(B)/tsan/tests/unit/analysis_threads
BENCH_SRC := $(sort $(wildcard tests/bench/*.c))

obj = $(patsubst %.c,$(B)/$(1)/%.o,$(2))

LIB_OBJ  := $(call obj,rel,$(LIB_SRC))
SO_OBJ   := $(call obj,rel,$(SO_SRC))
TOOL_OBJ := $(call obj,rel,$(TOOL_SRC))
CMD_OBJ  := $(call obj,rel,$(CMD_SRC))

BENCH_BIN     := $(patsubst tests/bench/%.c,$(B)/rel/tests/bench/%,$(BENCH_SRC))
HELPER_BIN    := $(patsubst tests/support/bin/%.c,$(B)/rel/tests/bin/%,$(wildcard tests/support/bin/*.c))
HELPER_ASAN_BIN := $(patsubst tests/support/bin/%.c,$(B)/asan/tests/bin/%,$(wildcard tests/support/bin/*.c))
FUZZ_BIN      := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

.SECONDARY:
.DELETE_ON_ERROR:
.PHONY: all check check-all demo bench fuzz install uninstall deps deps-build clean
all: $(B)/libprof.a $(B)/libprof.so $(B)/prof

# ---- objects, one pattern per variant ---------------------------------
# libprof's own sources get hidden visibility
vis = $(if $(filter $(SO_SRC),$<),-fvisibility=hidden)
$(B)/rel/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) $(vis) $(OPT) -fPIC -c $< -o $@
$(B)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC asan $<")
	$(Q)$(CC) $(CFLAGS_ALL) $(vis) $(ASAN) -c $< -o $@
$(B)/tsan/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC tsan $<")
	$(Q)$(CC) $(CFLAGS_ALL) $(vis) $(TSAN) -c $< -o $@

$(B)/gen/app.js: $(VIEWER_JS) tools/viewer_js.sh
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  JOIN    $@")
	$(Q)sh tools/viewer_js.sh $@ $(VIEWER_JS)

$(B)/gen/viewer_assets.c: $(VIEWER_FILES) tools/embed.sh
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  EMBED   $@")
	$(Q)sh tools/embed.sh $@ $(VIEWER_FILES)

$(B)/gen/sketch_table.c: tools/sketch_table.c src/model/sketch.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     $@")
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -Isrc -O2 -o $(B)/gen/sketch_table tools/sketch_table.c -lm && \
		$(B)/gen/sketch_table > $@

# ---- libraries and the binary -------------------------------------------
# libprof.a as installed: the library's objects linked into one (ld -r),
# whose hidden symbols, everything but the API, are then made local. A
# static library cannot hide a symbol otherwise, and a training program
# linking it must stay free to define any name of its own (rt, fmt_bytes).
# prof and the tests link $(B)/rel/libprof.a instead: the same objects,
# with the internal symbols they use left global. libprof.so links with
# -z defs: a helper missing from LIB_UTIL fails the build, not a program.
OBJCOPY ?= objcopy
$(B)/libprof.a: $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ $(B)/rel/libprof.o && $(LD) -r -o $(B)/rel/libprof.o $^ && \
		$(OBJCOPY) --localize-hidden $(B)/rel/libprof.o && ar rcs $@ $(B)/rel/libprof.o
$(B)/libprof.so: $(SO_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -pthread -Wl,-soname,libprof.so.0 -Wl,--version-script=src/record/libprof.map \
		-Wl,-z,defs $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/prof: $(CMD_OBJ) $(TOOL_OBJ) $(B)/rel/libprof.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -pthread $(LDFLAGS) -o $@ $(CMD_OBJ) $(TOOL_OBJ) $(B)/rel/libprof.a $(TOOL_LIBS) $(LIBS)

# Each flavour's library, tool and test-support objects as archives: a
# test or helper links only the objects it uses.
define flavour_archives
$(B)/$(1)/libprof.a: $(call obj,$(1),$(LIB_SRC))
	$(Q)rm -f $$@ && ar rcs $$@ $$^
$(B)/$(1)/libproftool.a: $(call obj,$(1),$(TOOL_SRC))
	$(Q)rm -f $$@ && ar rcs $$@ $$^
$(B)/$(1)/libproftest.a: $(call obj,$(1),$(SUP_SRC))
	$(Q)rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach f,rel asan tsan,$(eval $(call flavour_archives,$(f))))
$(B)/asan/prof: $(call obj,asan,$(CMD_SRC) $(TOOL_SRC)) $(B)/asan/libprof.a
	$(Q)$(CC) -pthread $(ASAN) -o $@ $^ $(TOOL_LIBS) $(LIBS)

# ---- tests ------------------------------------------------------------------
$(B)/rel/tests/unit/%: $(B)/rel/tests/unit/%.o $(B)/rel/libproftest.a $(B)/rel/libproftool.a $(B)/rel/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread -o $@ $^ -lcriterion $(TOOL_LIBS) $(LIBS)
$(B)/asan/tests/unit/%: $(B)/asan/tests/unit/%.o $(B)/asan/libproftest.a $(B)/asan/libproftool.a $(B)/asan/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread $(ASAN) -o $@ $^ -lcriterion $(TOOL_LIBS) $(LIBS)
$(B)/tsan/tests/unit/%: $(B)/tsan/tests/unit/%.o $(B)/tsan/libproftest.a $(B)/tsan/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread $(TSAN) -o $@ $^ -lcriterion $(SUP_LIBS) $(LIBS)
# model_threads builds models, import_kineto_fast imports: the tool's code is
# checked with the library's
$(TSAN_TOOL_UNITS): $(B)/tsan/tests/unit/%: $(B)/tsan/tests/unit/%.o \
		$(B)/tsan/libproftest.a $(B)/tsan/libproftool.a $(B)/tsan/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread $(TSAN) -o $@ $^ -lcriterion $(TOOL_LIBS) $(LIBS)
$(B)/rel/tests/bench/%: $(B)/rel/tests/bench/%.o $(B)/rel/libproftest.a $(B)/rel/libproftool.a $(B)/rel/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread -o $@ $^ $(TOOL_LIBS) $(LIBS)
$(B)/rel/tests/bin/%: $(B)/rel/tests/support/bin/%.o $(B)/rel/libproftest.a $(B)/rel/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread -o $@ $^ $(SUP_LIBS) $(LIBS)
$(B)/asan/tests/bin/%: $(B)/asan/tests/support/bin/%.o $(B)/asan/libproftest.a $(B)/asan/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread $(ASAN) -o $@ $^ $(SUP_LIBS) $(LIBS)

# The clang flavour: every source compiled by clang with the project's
# warnings as errors (both compilers must build the code clean), and
# instrumented for libFuzzer with ASan and UBSan. The fuzz targets
# (tests/fuzz/fuzz_*.c: everything that reads untrusted bytes) link these
# objects, compiled once for all of them. Each replays and explores the
# profiles of tests/fuzz/corpus plus its own tests/fuzz/corpus-NAME, when
# there is one (NAME: the target without "fuzz_").
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
CLANG_OBJ := $(call obj,clang,$(SO_SRC) $(TOOL_SRC) $(CMD_SRC) $(SUP_SRC) $(wildcard tests/fuzz/fuzz_*.c))
$(B)/clang/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC clang $<")
	$(Q)$(FUZZCC) $(CFLAGS_ALL) $(vis) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@
$(B)/fuzz/%: $(B)/clang/tests/fuzz/%.o $(call obj,clang,$(LIB_SRC) $(TOOL_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZCC) -pthread -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(TOOL_LIBS) $(LIBS)

# The same targets as plain programs (tests/fuzz/replay.c's main) over the
# plain build's objects: `make check` replays the corpora through them.
$(B)/rel/tests/fuzz/%: $(B)/rel/tests/fuzz/%.o $(B)/rel/tests/fuzz/replay.o $(B)/rel/libproftool.a $(B)/rel/libprof.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) -pthread -o $@ $^ $(TOOL_LIBS) $(LIBS)

# The check that needs an NVIDIA GPU (tests/gpu/device-check.sh): it
# builds its own prof, records a CUDA program and a PyTorch loop, and writes
# $(B)/gpu-check/summary.md; without a GPU it says SKIPPED (exit 77), never
# passed. gpu-bundle fetches the Debian packages that building needs into
# $(B)/gpu-bundle, for a GPU machine that reaches no package registry: the
# libraries prof links and the header of the one it loads (libmicrohttpd).
.PHONY: check-gpu gpu-bundle
check-gpu:
	$(Q)CUDA_HOME=$(CUDA_HOME) sh tests/gpu/device-check.sh --bundle $(B)/gpu-bundle --out $(B)/gpu-check
gpu-bundle:
	$(Q)sh tests/gpu/bundle.sh $(B)/gpu-bundle $(LIBS) $(TOOL_LIBS) microhttpd.h

# ---- Python binding ------------------------------------------------------------
# $(B)/python/prof is the package with libprof.so beside it and, where
# Python's headers are installed, the _native extension that makes the hot
# calls cheap (without it the package uses ctypes). Tests and benchmarks put
# $(B)/python on PYTHONPATH. PYTHON is the interpreter it is built for.
PYTHON  ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_CFG  := $(shell $(PYTHON) -c 'import sysconfig as s; print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
PY_INC  := $(word 1,$(PY_CFG))
PY_PKG  := $(B)/python/prof
PY_FILES := $(patsubst bindings/python/prof/%,$(PY_PKG)/%,$(wildcard bindings/python/prof/*.py bindings/python/prof/_boot/*.py)) \
	$(PY_PKG)/libprof.so $(if $(wildcard $(PY_INC)/Python.h),$(PY_PKG)/_native$(word 2,$(PY_CFG)))
.PHONY: python
python: $(PY_FILES)
$(PY_PKG)/%.py: bindings/python/prof/%.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
$(PY_PKG)/libprof.so: $(B)/libprof.so
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
$(PY_PKG)/_native$(word 2,$(PY_CFG)): bindings/python/prof/_native.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(FUZZCC) -std=c11 $(WARN) -isystem $(PY_INC) -fsyntax-only $<
	$(Q)$(CC) -std=c11 $(WARN) -isystem $(PY_INC) $(OPT) -fPIC -shared -o $@ $<

# ---- test tiers ---------------------------------------------------------------
# `make check` builds the plain flavour and runs every kind of test once with
# it: the unit tests, the command-line tests (the man pages' examples, real
# PyTorch and the dashboard in Chromium among them) and the fuzz targets'
# stored corpora replayed through the plain build. `make check-all`, what CI
# runs, adds the unit and command-line tests under ASan+UBSan, the threaded
# units under TSan, the clang build and libFuzzer's replay of the corpora.
# Each suite is one target, $(R)/SUITE, run by tests/suite.sh (which names
# them), so that make runs them on every core, each as soon as what it needs
# is built; the slowest come first so that they start first. Both tiers end
# with tests/summary.sh: skips, failures, the five slowest suites, and
# "N passed, N failed, N skipped".
R    := $(B)/results
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# slow_first SLOW,ALL: ALL with the names in SLOW first, in SLOW's order
slow_first = $(foreach n,$(1),$(filter $(n),$(2))) $(filter-out $(1),$(2))
# a command-line script that names its variants ("# variants: rel") runs
# for those only
CLI_NAMES := $(call slow_first,view hostile export gpu_join gpu_check,$(patsubst tests/cli/%.sh,%,$(wildcard tests/cli/*.sh)))
CLI_REL_ONLY := $(patsubst tests/cli/%.sh,%,$(shell grep -l '^\# variants: rel$$' tests/cli/*.sh))
CLI_ASAN_NAMES := $(filter-out $(CLI_REL_ONLY),$(CLI_NAMES))
UNIT_NAMES := $(patsubst tests/unit/%.c,%,$(UNIT_SRC))
PY_NAMES   := $(call slow_first,compare torch auto,$(patsubst tests/python/test_%.py,%,$(wildcard tests/python/test_*.py)))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))

CHECK_SUITES := $(addprefix python/,$(PY_NAMES)) $(addprefix cli/,$(CLI_NAMES)) $(addprefix unit/,$(UNIT_NAMES)) \
	$(addprefix fuzz/,$(FUZZ_NAMES))
ALL_SUITES := $(addprefix python-asan/,$(PY_NAMES)) $(addprefix cli-asan/,$(CLI_ASAN_NAMES)) $(CHECK_SUITES) \
	$(addprefix unit-asan/,$(UNIT_NAMES)) $(patsubst tests/unit/%.c,unit-tsan/%,$(TSAN_UNITS)) \
	$(addprefix fuzz-asan/,$(FUZZ_NAMES))

# what the command-line suites run: the binary and libraries, the Python
# package, the helpers and the comparison benchmark; the Python suites, the
# slowest, need less and start sooner
CLI_NEEDS := $(B)/prof $(B)/libprof.a $(B)/libprof.so $(B)/rel/libprof.a $(PY_FILES) $(HELPER_BIN) \
	$(B)/rel/tests/bench/compare_aa $(B)/rel/tests/bench/compare_busy
PY_NEEDS := $(B)/prof $(PY_FILES) $(B)/rel/tests/bin/dump_events
run_suite = $(Q)B=$(B) sh tests/suite.sh $(patsubst $(R)/%,%,$@)
$(R)/cli/%: tests/cli/%.sh $(CLI_NEEDS)
	$(run_suite)
$(R)/cli-asan/%: tests/cli/%.sh $(CLI_NEEDS) $(B)/asan/prof $(HELPER_ASAN_BIN)
	$(run_suite)
$(R)/python/%: tests/python/test_%.py $(PY_NEEDS)
	$(run_suite)
$(R)/python-asan/%: tests/python/test_%.py $(PY_NEEDS) $(B)/asan/prof $(B)/asan/tests/bin/dump_events
	$(run_suite)
$(R)/unit/%: $(B)/rel/tests/unit/%
	$(run_suite)
$(R)/unit-asan/%: $(B)/asan/tests/unit/%
	$(run_suite)
$(R)/unit-tsan/%: $(B)/tsan/tests/unit/%
	$(run_suite)
$(R)/fuzz/%: $(B)/rel/tests/fuzz/%
	$(run_suite)
$(R)/fuzz-asan/%: $(B)/fuzz/%
	$(run_suite)

# A tier: the results of a previous run are removed, make builds and runs the
# suites (-k: a target that fails to build stops only what needs it), and
# the summary reads what every suite left. It fails when a build failed, a
# suite failed or left no result.
run_tier = $(Q)rm -rf $(R) && status=0; \
	$(MAKE) --no-print-directory -k -j$(JOBS) --output-sync=target $(1) || status=$$?; \
	B=$(B) sh tests/summary.sh $(2) && [ $$status -eq 0 ]
check: deps
	$(call run_tier,$(addprefix $(R)/,$(CHECK_SUITES)),$(CHECK_SUITES))
check-all: deps
	$(call run_tier,$(addprefix $(R)/,$(ALL_SUITES)) $(CLANG_OBJ),$(ALL_SUITES))

# ---- demo profile -----------------------------------------------------------
# testdata/demo.prof is committed; this regenerates it (byte for byte).
testdata/demo.prof: $(B)/rel/tests/bin/make_demo
	$(Q)$< $@

demo: deps-build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(B)/prof analyze testdata/demo.prof

# ---- benchmarks and fuzzing ------------------------------------------------------
# the analyze benchmark compares with json + pandas
bench: DEP_PY += pandas:python3-pandas
bench: deps
	$(Q)$(MAKE) --no-print-directory all python $(BENCH_BIN) $(B)/rel/tests/bin/make_demo \
		$(B)/rel/tests/bin/make_big $(B)/rel/tests/bin/run_measured $(B)/rel/tests/bin/zstd_frames \
		$(B)/rel/tests/bin/read_floor $(B)/rel/tests/bin/make_gpu $(B)/rel/tests/bin/make_ranks
	$(Q)B=$(B) sh tests/bench/run.sh

FUZZ_SECONDS ?= 60
fuzz: deps $(FUZZ_BIN)
	$(Q)for f in $(FUZZ_BIN); do \
		n=$$(basename $$f); mkdir -p $(B)/fuzz/corpus-$$n; \
		own=tests/fuzz/corpus-$${n#fuzz_}; [ -d $$own ] || own=; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 $(B)/fuzz/corpus-$$n tests/fuzz/corpus $$own \
			|| exit 1; \
	done

# ---- dependencies -------------------------------------------------------------
# Two sets: what building needs (`make demo` installs only these), and what
# the tests add (`make check`, `make bench`, `make fuzz`).
# pkg-config module, Debian package
DEP_BUILD_PC := libzstd:libzstd-dev libcjson:libcjson-dev gsl:libgsl-dev \
	libmicrohttpd:libmicrohttpd-dev yajl:libyajl-dev zlib:zlib1g-dev sqlite3:libsqlite3-dev
DEP_PC   := $(DEP_BUILD_PC) criterion:libcriterion-dev
# command, Debian package
DEP_BUILD_CMD := pkg-config:pkg-config objdump:binutils
DEP_CMD  := $(DEP_BUILD_CMD) clang:clang zstd:zstd
# the dashboard's browser tests: Debian's chromium driven by playwright-core from npm
DEP_CMD  += chromium:chromium npm:npm curl:curl
# the hostile tests stop prof inside its output's fsync, found with strace
DEP_CMD  += strace:strace
# Python module, Debian package (the binding's tests run $(PYTHON)); and its headers
DEP_PY   := torch:python3-torch jsonschema:python3-jsonschema
# the per-rank step on a distributed engine (examples/dask_ranks.py, its test)
DEP_PY   += dask:python3-dask distributed:python3-distributed

# deps_install PC CMD PY EXTRA: installs the Debian packages of the missing
# pkg-config modules, commands and Python modules (EXTRA: shell that adds
# to $$missing), as root; anyone else is told the command to run.
define deps_install
	$(Q)missing=""; \
	for d in $(1); do \
		pkg-config --exists $${d%%:*} 2>/dev/null || missing="$$missing $${d#*:}"; \
	done; \
	for d in $(2); do \
		command -v $${d%%:*} >/dev/null 2>&1 || missing="$$missing $${d#*:}"; \
	done; \
	for d in $(3); do \
		$(PYTHON) -c "import $${d%%:*}" >/dev/null 2>&1 || missing="$$missing $${d#*:}"; \
	done; \
	$(4) \
	missing=$$(echo $$missing | tr ' ' '\n' | sort -u | tr '\n' ' '); \
	if [ -n "$${missing% }" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "deps: installing $$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null \
				|| { echo "deps: apt-get install failed" >&2; exit 1; }; \
		else \
			echo "deps: missing packages; run: sudo apt-get install -y $$missing" >&2; exit 1; \
		fi; \
	fi
endef
deps-build:
	$(call deps_install,$(DEP_BUILD_PC),$(DEP_BUILD_CMD),,)
deps:
	$(call deps_install,$(DEP_PC),$(DEP_CMD),$(DEP_PY),\
	ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 \
		|| missing="$$missing libclang-rt-dev"; \
	[ -f "$(PY_INC)/Python.h" ] || missing="$$missing python3-dev";)
	$(Q)[ -d tests/browser/node_modules/playwright-core ] || \
		(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) || \
		{ echo "deps: npm ci in tests/browser failed" >&2; exit 1; }

# ---- install ------------------------------------------------------------------
# The Python package goes to lib/prof/python/prof, where `prof record` puts it
# on PYTHONPATH, with libprof.so a link to the installed library (the package
# looks for it beside itself).
PY_DEST = $(DESTDIR)$(PREFIX)/lib/prof/python/prof
install: all python
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(B)/prof $(DESTDIR)$(PREFIX)/bin/prof
	install -m 644 $(B)/libprof.a $(DESTDIR)$(PREFIX)/lib/libprof.a
	install -m 755 $(B)/libprof.so $(DESTDIR)$(PREFIX)/lib/libprof.so.0
	ln -sf libprof.so.0 $(DESTDIR)$(PREFIX)/lib/libprof.so
	install -m 644 include/prof.h include/prof_reader.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|'"$$(sed -n 's/^#define PROF_VERSION_STRING "\(.*\)"/\1/p' include/prof.h)"'|' \
		prof.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/prof.pc
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -d $(PY_DEST)/_boot
	install -m 644 $(wildcard bindings/python/prof/*.py) $(PY_DEST)/
	install -m 644 $(wildcard bindings/python/prof/_boot/*.py) $(PY_DEST)/_boot/
	$(if $(wildcard $(PY_INC)/Python.h),install -m 755 $(PY_PKG)/_native$(word 2,$(PY_CFG)) $(PY_DEST)/)
	ln -sf ../../../libprof.so.0 $(PY_DEST)/libprof.so

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/prof $(DESTDIR)$(PREFIX)/lib/libprof.a \
		$(DESTDIR)$(PREFIX)/lib/libprof.so $(DESTDIR)$(PREFIX)/lib/libprof.so.0 \
		$(DESTDIR)$(PREFIX)/include/prof.h $(DESTDIR)$(PREFIX)/include/prof_reader.h \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/prof.pc
	for m in man/*.1 man/*.3 man/*.5; do \
		s=$${m##*.}; rm -f $(DESTDIR)$(PREFIX)/share/man/man$$s/$$(basename $$m); done
	rm -rf $(PY_DEST)
	rmdir $(DESTDIR)$(PREFIX)/lib/prof/python $(DESTDIR)$(PREFIX)/lib/prof 2>/dev/null || true

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' 2>/dev/null)
