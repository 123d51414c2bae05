# The user-facing targets; CMake does the building (in build/, and in
# build-asan/ for the sanitizer build that `make test` uses).
#
#   make run    build and start jobd on the embedded SQLite default
#   make test   install what is missing, build with ASan+UBSan and -Werror,
#               start a throwaway PostgreSQL, run every test with CTest
#   make build  just build build/jobd
#   make install  build, then install under PREFIX (/usr/local) into DESTDIR:
#               jobd, libjobd.so.0, jobd.h, jobd.pc, man pages, completion,
#               example configs (PREFIX/etc/jobd, /etc/jobd for /usr), units
#   make deb    a Release build for /usr packed into jobd_VERSION_ARCH.deb
#               (scripts/mkdeb.sh; lintian-clean of errors)
#   make bench  every benchmark (~15 min): bench/run.sh, results in bench/results/,
#               tables and plots into docs/BENCHMARKS.md and docs/bench/
#   make soak   the fault-injection scenarios' long versions (SOAK=1,
#               docs/SCENARIOS.md) on the sanitizer build
#   make fuzz   build the libFuzzer targets with clang (build-fuzz/) and run
#               each for FUZZ_SECONDS (default 60); see docs/FUZZING.md

JOBS ?= 2
PREFIX ?= /usr/local
DESTDIR ?=
CMAKE ?= cmake
FUZZ_SECONDS ?= 60

.PHONY: all build install deb run test soak fuzz bench deps clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build build -j $(JOBS)

install: build
	@$(CMAKE) -S . -B build -DCMAKE_INSTALL_PREFIX="$(PREFIX)" >/dev/null
	@DESTDIR="$(DESTDIR)" $(CMAKE) --install build --prefix "$(PREFIX)"

deb: deps
	@$(CMAKE) -S . -B build-deb -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
	@$(CMAKE) --build build-deb -j $(JOBS)
	@scripts/mkdeb.sh build-deb .

run: build
	@scripts/run.sh

test: deps
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON -DJOBD_FUZZ_BRIEF=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@scripts/with-pg.sh ctest --test-dir build-asan --output-on-failure -j $(JOBS) $(CTEST_ARGS)

bench: deps
	@bench/run.sh

soak: deps
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@SOAK=1 scripts/with-pg.sh ctest --test-dir build-asan -V -L scenario $(CTEST_ARGS)

fuzz: deps
	@CC=clang $(CMAKE) -S . -B build-fuzz -DJOBD_FUZZ=ON >/dev/null
	@$(CMAKE) --build build-fuzz -j $(JOBS) --target fuzz_all
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

clean:
	rm -rf build build-asan build-fuzz build-deb
