# The user-facing targets; CMake does the building (in build/, and in
# build-asan/ for the sanitizer build that `make test` uses).
#
#   make run    build and start jobd on the embedded SQLite default; reads
#               JOBD_LISTEN (127.0.0.1:8080) and JOBD_DB (sqlite:jobd.db)
#   make test   install what is missing, lint, build with ASan+UBSan and -Werror,
#               start a throwaway PostgreSQL, run every test with CTest
#   make build  just build build/jobd and libjobd (no tests, fuzz or bench targets)
#   make install  build, then install under PREFIX (/usr/local) into DESTDIR:
#               jobd, libjobd.so.0, jobd.h, jobd.pc, man pages, completion,
#               example configs (PREFIX/etc/jobd, /etc/jobd for /usr), units
#   make deb    a Release build for /usr packed into jobd, libjobd0 and
#               libjobd-dev _VERSION_ARCH.deb (scripts/mkdeb.sh; lintian -I clean)
#   make lint   format of the whole tree, cppcheck, sizes and backend names,
#               citations of files not in the repository (scripts/lint-refs.py),
#               banned functions (docs/CHECKING.md), docs/openapi.yaml with Redocly CLI (scripts/lint.sh; npm ci
#               into tests/openapi/ once); `make test` runs it first
#   make bench  every benchmark (~15 min): bench/run.sh, results in bench/results/,
#               tables and plots into docs/BENCHMARKS.md and docs/bench/
#   make soak   `make tsan`, then the fault-injection scenarios' long
#               versions (SOAK=1, docs/SCENARIOS.md) on the sanitizer build
#   make soak-perf  jobd under steady churn for SOAK_MIN minutes (30) at half
#               its measured capacity: rate, claim p99, sizes, dead tuples
#               each minute and their slopes (bench/soak.py, docs/BENCHMARKS.md)
#   make fuzz   build the libFuzzer targets with clang (build-fuzz/) and run
#               each for FUZZ_SECONDS (default 60); see docs/FUZZING.md
#   make tsan   build with ThreadSanitizer (build-tsan/) and run the tests
#               of the threaded parts (TSAN_TESTS: the worker, the committer,
#               long polls, the count cache, bulk requests, the lease
#               watchdog...); a race fails the test; docs/CHECKING.md

JOBS ?= 2
# cmake --build runs make under this make: no "Entering directory" chatter.
MAKEFLAGS += --no-print-directory
PREFIX ?= /usr/local
DESTDIR ?=
CMAKE ?= cmake
FUZZ_SECONDS ?= 60

# The tests `make tsan` runs: those that drive jobd's threads. Each name is
# a test executable (tests/unit/test_NAME.c or tests/integration/test_NAME.c).
TSAN_UNIT = worker_fence worker_exec worker_http worker_completer
# (worker_adaptive is left out: it asserts how a claim spreads long jobs
# over two workers within wall-clock times TSan's slowdown breaks.)
TSAN_INTEGRATION = worker_e2e worker_c worker_prefetch api_group_commit \
    api_longpoll_wake api_counts api_conns api_embedded api_shutdown ops_bulk schedules \
    sqlite_wake_store
TSAN_REGEX = ^(unit_test_($(subst $(eval) ,|,$(strip $(TSAN_UNIT))))|integration_test_($(subst $(eval) ,|,$(strip $(TSAN_INTEGRATION)))))$$
# halt_on_error: the first race ends the process (a server a test started
# too), so the test fails; tests/tsan.supp lists the reports that are not
# ours to fix, each with its reason.
TSAN_OPTIONS_MAKE = suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1

.PHONY: all build install deb run test lint soak soak-perf fuzz bench deps clean tsan

all: build

deps:
	@scripts/deps.sh

build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJOBD_TESTS=OFF >/dev/null
	@$(CMAKE) --build build -j $(JOBS)

install: build
	@$(CMAKE) -S . -B build -DCMAKE_INSTALL_PREFIX="$(PREFIX)" >/dev/null
	@DESTDIR="$(DESTDIR)" $(CMAKE) --install build --prefix "$(PREFIX)"

deb: deps
	@$(CMAKE) -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
	    -DJOBD_TESTS=OFF >/dev/null
	@$(CMAKE) --build build-deb -j $(JOBS)
	@debs=$$(scripts/mkdeb.sh build-deb .) && echo "$$debs" && \
	    scripts/lintian-check.sh $$debs

# Quiet: says it builds and how long it took (the build's output only if
# it fails), then what run.sh says and the server's log.
run: deps
	@CMAKE="$(CMAKE)" JOBS="$(JOBS)" scripts/run.sh --build

lint: deps
	@scripts/lint.sh

test: deps
	@scripts/lint.sh
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON -DJOBD_FUZZ_BRIEF=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@JOBD_TEST_REQUIRE_PG=1 scripts/with-pg.sh ctest --test-dir build-asan --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: deps
	@bench/run.sh

# make tsan is here, not in make test: its own build of everything plus the
# tests is ~3 min more on 2 cores, and make test must stay well under 15.
soak: deps tsan
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@SOAK=1 JOBD_TEST_REQUIRE_PG=1 scripts/with-pg.sh ctest --test-dir build-asan -V -L scenario $(CTEST_ARGS)

soak-perf: deps
	@$(CMAKE) -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
	@$(CMAKE) --build build-bench -j $(JOBS) --target jobd jobd_bench
	@python3 bench/soak.py

fuzz: deps
	@CC=clang $(CMAKE) -S . -B build-fuzz -DJOBD_FUZZ=ON >/dev/null
	@$(CMAKE) --build build-fuzz -j $(JOBS) --target fuzz_all
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

tsan: deps
	@$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DJOBD_TSAN=ON -DJOBD_TEST_HOOKS=ON >/dev/null
	@$(CMAKE) --build build-tsan -j $(JOBS) --target jobd \
	    $(addprefix test_,$(TSAN_UNIT) $(TSAN_INTEGRATION))
	@TSAN_OPTIONS="$(TSAN_OPTIONS_MAKE)" JOBD_TEST_REQUIRE_PG=1 scripts/with-pg.sh \
	    ctest --test-dir build-tsan --output-on-failure -j $(JOBS) -R '$(TSAN_REGEX)' $(CTEST_ARGS)

clean:
	rm -rf build build-asan build-fuzz build-deb build-tsan
