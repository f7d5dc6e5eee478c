# sqlite-parallel: build, test, demo and benchmarks.
#
#   make                 build ./parallel.so (load it with .load ./parallel)
#   make demo            build the sample database and run the demo queries
#   make test            every test (plain and under ASan+UBSan), one line
#                        per program as it ends, then "N passed, N failed"
#   make check           the fast tier (under a minute): kernels, batches,
#                        the SQL suites' quick parts, examples; no ASan
#   make test-asan       the suite under AddressSanitizer + UBSan only
#   make bench-kernels   kernel throughput against memcpy, 1 thread vs all
#   make bench           the queries of DESIGN.md section 5: native SQLite vs
#                        parallel views vs DuckDB (when installed)
#   make bench-duckdb    install DuckDB for make bench (npm, bench/duckdb)
#   make bench-tpch      TPC-H's 22 queries (SF, default 1): native SQLite vs
#                        parallel views vs DuckDB (bench/tpch.py, docs/tpch.md)
#   make bench-interrupts how promptly interrupted views stop (latencies)
#   make bench-concat    parBatchConcat joining 512 pieces with shared texts
#   make fuzz            libFuzzer on tests/fuzz/fuzz_sql.c (clang, ASan+UBSan)
#                        for FUZZ_SECONDS (600) in FUZZ_JOBS (1) processes;
#                        findings are copied to tests/fuzz/crashes/
#
# Targets that need SQLite's headers, the sqlite3 shell or Debian's python3
# install them with apt-get when run as root (see tools/deps.sh).

CC       = gcc
OPT     ?= -O2
WARN     = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
CFLAGS   = -std=c11 $(OPT) -g -fopenmp -fPIC -fvisibility=hidden $(WARN) -D_GNU_SOURCE -Ikernels -Iext
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined
LDLIBS   = -lm

KERNEL_SRC = $(wildcard kernels/*.c)
EXT_SRC    = $(wildcard ext/*.c)
HEADERS    = $(wildcard kernels/*.h ext/*.h)

# Object sets: rel = the extension; core = ext compiled against the SQLite
# library directly (C tests); tiny = kernels with 8-element blocks (tests);
# asan = everything with sanitizers, result rows left unset poisoned
# (PAR_POISON_UNSET), blocks of 4 KiB and more kept for reuse (PAR_BIG_MIN,
# batch.c: stale bytes and uses of kept blocks show); asancore = also dictionaries whose hash slots keep no
# tag (PAR_DICT_TAG=0: the bytes decide every probe).
REL_OBJ   = $(patsubst %.c,build/rel/%.o,$(KERNEL_SRC) $(EXT_SRC))
CORE_OBJ  = $(patsubst %.c,build/core/%.o,$(KERNEL_SRC) $(EXT_SRC))
TINY_OBJ  = $(patsubst %.c,build/tiny/%.o,$(KERNEL_SRC))
ASAN_OBJ  = $(patsubst %.c,build/asan/%.o,$(KERNEL_SRC) $(EXT_SRC))
ASANT_OBJ = $(patsubst %.c,build/asantiny/%.o,$(KERNEL_SRC))
ASANC_OBJ = $(patsubst %.c,build/asancore/%.o,$(KERNEL_SRC) $(EXT_SRC))

.PHONY: all deps demo test test-plain test-asan bench bench-duckdb bench-kernels \
        bench-interrupts bench-concat bench-tpch clean fuzz fuzz-deps
all: parallel.so

deps:
	@sh tools/deps.sh

parallel.so: $(REL_OBJ)
	$(CC) -shared -fopenmp -Wl,-z,defs -Wl,-z,nodelete -o $@ $(REL_OBJ) $(LDLIBS)

build/rel/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
build/core/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSQLITE_CORE -c $< -o $@
build/tiny/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1 -c $< -o $@
build/asan/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPAR_POISON_UNSET -DPAR_BIG_MIN=4096 -c $< -o $@
build/asantiny/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1 -c $< -o $@
build/asancore/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPAR_POISON_UNSET -DPAR_DICT_TAG=0 -DPAR_BIG_MIN=4096 -DSQLITE_CORE -c $< -o $@

# ---- tests ---------------------------------------------------------------
# Kernel tests run twice: with the real block size and with tiny blocks.
KTEST_SRC = tests/test_kernels.c tests/check.c
BTEST_SRC = tests/test_batch.c tests/check.c
PTEST_SRC = tests/test_parse.c tests/check.c

build/test_kernels: $(KTEST_SRC) $(filter build/rel/kernels/%,$(REL_OBJ)) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) -Ikernels -o $@ $(KTEST_SRC) $(filter build/rel/kernels/%,$(REL_OBJ)) $(LDLIBS)
build/test_kernels_tiny: $(KTEST_SRC) $(TINY_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1 -Ikernels -o $@ $(KTEST_SRC) $(TINY_OBJ) $(LDLIBS)
build/test_batch: $(BTEST_SRC) $(CORE_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) -DSQLITE_CORE -Iext -Ikernels -o $@ $(BTEST_SRC) $(CORE_OBJ) -lsqlite3 $(LDLIBS)

# test_parse needs the parser alone.
build/test_parse: $(PTEST_SRC) build/core/ext/sqlparse.o tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) -DSQLITE_CORE -Iext -Ikernels -o $@ $(PTEST_SRC) build/core/ext/sqlparse.o -lsqlite3 $(LDLIBS)
# test_agg: agg.c's steps, inverses and values against SQLite's window
# functions (the extension's objects linked in, as for test_batch).
build/test_agg: tests/test_agg.c tests/check.c $(CORE_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) -DSQLITE_CORE -Iext -Ikernels -o $@ tests/test_agg.c tests/check.c $(CORE_OBJ) -lsqlite3 $(LDLIBS)
build/asan/test_agg: tests/test_agg.c tests/check.c $(ASANC_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPAR_BIG_MIN=4096 -DSQLITE_CORE -Iext -Ikernels -o $@ tests/test_agg.c tests/check.c $(ASANC_OBJ) -lsqlite3 $(LDLIBS)

build/asan/parallel.so: $(ASAN_OBJ)
	$(CC) -shared -fopenmp -Wl,-z,nodelete $(SANFLAGS) -o $@ $(ASAN_OBJ) $(LDLIBS)
build/asan/test_kernels: $(KTEST_SRC) $(filter build/asan/kernels/%,$(ASAN_OBJ)) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) $(SANFLAGS) -Ikernels -o $@ $(KTEST_SRC) $(filter build/asan/kernels/%,$(ASAN_OBJ)) $(LDLIBS)
build/asan/test_kernels_tiny: $(KTEST_SRC) $(ASANT_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1 -Ikernels -o $@ $(KTEST_SRC) $(ASANT_OBJ) $(LDLIBS)
build/asan/test_batch: $(BTEST_SRC) $(ASANC_OBJ) tests/check.h $(HEADERS)
	$(CC) $(CFLAGS) $(SANFLAGS) -DPAR_BIG_MIN=4096 -DSQLITE_CORE -Iext -Ikernels -o $@ $(BTEST_SRC) $(ASANC_OBJ) -lsqlite3 $(LDLIBS)
build/asan/test_parse: $(PTEST_SRC) build/asancore/ext/sqlparse.o tests/check.h $(HEADERS)
	@mkdir -p build/asan
	$(CC) $(CFLAGS) $(SANFLAGS) -DSQLITE_CORE -Iext -Ikernels -o $@ $(PTEST_SRC) build/asancore/ext/sqlparse.o -lsqlite3 $(LDLIBS)

# test_oom loads the extension (the .so) under an allocator that fails.
build/test_oom: tests/test_oom.c tests/check.c tests/check.h
	@mkdir -p build
	$(CC) $(CFLAGS) -o $@ tests/test_oom.c tests/check.c -lsqlite3 $(LDLIBS)
build/asan/test_oom: tests/test_oom.c tests/check.c tests/check.h
	@mkdir -p build/asan
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ tests/test_oom.c tests/check.c -lsqlite3 $(LDLIBS)

# fuzz_replay runs the fuzz target (tests/fuzz/) over its corpus and every
# input that ever crashed it, built with gcc like the rest of the suite: the
# sanitized extension of test_batch (SQLITE_CORE) with the kernels of 8-element
# blocks, which is what make fuzz builds (ext/ reads the block size only for
# histogram.c's thread count), without compiling everything once more.
FUZZ_DEFS = -DSQLITE_CORE -DPX_BLOCK=8 -DPX_PAR_MIN_BLOCKS=1 -DPAR_POISON_UNSET \
            -DPAR_DICT_TAG=0 -DPAR_BIG_MIN=4096
FUZZR_OBJ = $(filter build/asancore/ext/%,$(ASANC_OBJ)) $(ASANT_OBJ)
build/asan/fuzz_replay: tests/fuzz/replay.c tests/fuzz/fuzz_sql.c $(FUZZR_OBJ)
	@mkdir -p build/asan
	$(CC) $(CFLAGS) $(SANFLAGS) $(FUZZ_DEFS) -o $@ tests/fuzz/replay.c tests/fuzz/fuzz_sql.c \
	  $(FUZZR_OBJ) -lsqlite3 $(LDLIBS)

PLAIN_BINS = build/test_kernels build/test_kernels_tiny build/test_batch build/test_parse \
             build/test_agg build/test_oom build/tpch_dbgen parallel.so
ASAN_BINS  = build/asan/test_kernels build/asan/test_kernels_tiny build/asan/test_batch \
             build/asan/test_parse build/asan/test_agg build/asan/test_oom build/asan/parallel.so \
             build/asan/fuzz_replay

# make test: the plain suite and the same suite under the sanitizers, two
# programs at a time (tests/run.sh says which run alone); the runner prints
# one summary line for everything.  The programs are built on every core
# unless make was given -j.
NPROC  := $(shell nproc 2>/dev/null || echo 1)
JFLAG   = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))
.PHONY: plain-bins asan-bins check-bins
plain-bins: $(PLAIN_BINS)
	@:
asan-bins: $(ASAN_BINS)
	@:
check-bins: build/test_kernels build/test_kernels_tiny build/test_batch build/test_parse build/test_agg parallel.so
	@:

test: deps
	@$(MAKE) --no-print-directory $(JFLAG) plain-bins asan-bins
	@sh tests/run.sh plain asan

test-plain: deps
	@$(MAKE) --no-print-directory $(JFLAG) plain-bins
	@sh tests/run.sh plain

test-asan: deps
	@$(MAKE) --no-print-directory $(JFLAG) asan-bins
	@sh tests/run.sh asan

# make check: what tests/run.sh calls quick (the kernel, batch and parser tests, the
# quick parts of the SQL suites, the examples) on the plain builds.
.PHONY: check
check: deps
	@$(MAKE) --no-print-directory $(JFLAG) check-bins
	@sh tests/run.sh quick

# ---- fuzzing -------------------------------------------------------------
# make fuzz: libFuzzer with ASan+UBSan over build/fuzz-corpus (seeded from
# tests/fuzz/corpus and tests/fuzz/crashes), with the SQL dictionary;
# tests/fuzz/fuzz.sh restarts it after each finding until FUZZ_SECONDS
# have passed, copies crash and leak reproducers to tests/fuzz/crashes/
# and ends with the statistics.  Needs clang, its libFuzzer runtime and
# libomp (installed with apt-get when run as root).
FUZZ_SECONDS ?= 600
FUZZ_JOBS    ?= 1
FUZZ_CC      ?= clang
FUZZ_CFLAGS  = -std=c11 -O1 -g -fopenmp $(WARN) -D_GNU_SOURCE -Ikernels -Iext $(FUZZ_DEFS) \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer
FUZZ_OBJ = $(patsubst %.c,build/fuzz/%.o,$(KERNEL_SRC) $(EXT_SRC))

fuzz-deps:
	@printf 'int LLVMFuzzerTestOneInput(const char *a, long n){ (void)a; (void)n; return 0; }\n' \
	  > /tmp/par_fuzzprobe_$$$$.c; \
	if ! $(FUZZ_CC) -fsanitize=fuzzer,address -fopenmp -o /tmp/par_fuzzprobe_$$$$ \
	     /tmp/par_fuzzprobe_$$$$.c >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "fuzz: installing clang libclang-rt-dev libomp-dev"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get update -q >/dev/null && \
	      apt-get install -y -q clang libclang-rt-dev libomp-dev >/dev/null || exit 1; \
	  else \
	    echo "fuzz: needs clang with libFuzzer and OpenMP:" \
	         "sudo apt-get install -y clang libclang-rt-dev libomp-dev" >&2; exit 1; \
	  fi; \
	fi; rm -f /tmp/par_fuzzprobe_$$$$ /tmp/par_fuzzprobe_$$$$.c

build/fuzz/%.o: %.c $(HEADERS) | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
build/fuzz/fuzz_sql: tests/fuzz/fuzz_sql.c $(FUZZ_OBJ) | fuzz-deps
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_sql.c $(FUZZ_OBJ) \
	  -lsqlite3 $(LDLIBS)

fuzz: deps build/fuzz/fuzz_sql
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/fuzz.sh build/fuzz/fuzz_sql

# ---- demo and benchmarks -------------------------------------------------
demo: deps parallel.so
	@sh sql/demo.sh

build/bench_kernels: bench/bench_kernels.c $(filter build/rel/kernels/%,$(REL_OBJ)) $(HEADERS)
	$(CC) $(CFLAGS) -Ikernels -o $@ bench/bench_kernels.c $(filter build/rel/kernels/%,$(REL_OBJ)) $(LDLIBS)

bench-kernels: build/bench_kernels
	./build/bench_kernels

# parBatchConcat's merge of the pieces' text dictionaries (bench/concat.c).
build/bench_concat: bench/concat.c $(CORE_OBJ) $(HEADERS)
	$(CC) $(CFLAGS) -DSQLITE_CORE -Iext -Ikernels -o $@ bench/concat.c $(CORE_OBJ) -lsqlite3 $(LDLIBS)

bench-concat: build/bench_concat
	./build/bench_concat

# make bench: DESIGN.md section 5 (BENCH_ROWS, BENCH_REPS, BENCH_THREADS from
# the environment); DuckDB takes part once make bench-duckdb has installed it.
bench: deps parallel.so
	/usr/bin/python3 bench/bench.py

# TPC-H's data generator (no dependency) and benchmark: SF (default 1),
# TPCH_THREADS, TPCH_REPS, TPCH_QUERIES, TPCH_LIMIT from the environment.
build/tpch_dbgen: bench/tpch/dbgen.c
	@mkdir -p build
	$(CC) -std=c11 $(OPT) $(WARN) -o $@ bench/tpch/dbgen.c

bench-tpch: deps parallel.so build/tpch_dbgen
	/usr/bin/python3 bench/tpch.py

# sqlite3_interrupt() at random moments of a 5M-row, 1M-group view's scans.
bench-interrupts: deps parallel.so
	/usr/bin/python3 bench/interrupts.py

# DuckDB's engine comes prebuilt inside the npm package; bench/duckdb/package.json
# pins its version and package-lock.json the rest.  npm install, not npm ci:
# the lock holds only the platform packages the registry here serves, which
# npm ci rejects as out of sync with the full list of optional ones.
bench-duckdb:
	@command -v npm >/dev/null 2>&1 || { \
	  echo "bench-duckdb: needs node and npm (Debian: apt-get install -y nodejs npm)" >&2; exit 1; }
	cd bench/duckdb && npm install --no-audit --no-fund

# make install: parallel.so into $(PREFIX)/lib/sqlite3/ (load it with
# .load /usr/local/lib/sqlite3/parallel) and the documentation into
# $(PREFIX)/share/doc/sqlite-parallel/, docs/ kept as a subfolder so the
# pages' links still work; DESTDIR prefixes both (packaging).
# make uninstall removes what install put there.
PREFIX ?= /usr/local
LIBDIR  = $(DESTDIR)$(PREFIX)/lib/sqlite3
DOCDIR  = $(DESTDIR)$(PREFIX)/share/doc/sqlite-parallel
DOCS    = README.md LICENSE CHANGELOG.md

.PHONY: install uninstall
install: parallel.so
	install -d $(LIBDIR) $(DOCDIR)/docs
	install -m 644 parallel.so $(LIBDIR)/parallel.so
	install -m 644 $(DOCS) $(DOCDIR)/
	install -m 644 docs/*.md $(DOCDIR)/docs/

uninstall:
	rm -f $(LIBDIR)/parallel.so
	rm -f $(addprefix $(DOCDIR)/,$(DOCS)) $(addprefix $(DOCDIR)/,$(wildcard docs/*.md))
	-rmdir $(DOCDIR)/docs $(DOCDIR) $(LIBDIR) 2>/dev/null

clean:
	rm -rf build parallel.so
