# The user-facing targets; CMake does the building (in build/, and in
# build-asan/ for the sanitizer build that `make test` uses).
#
#   make run    build and start jobd on the embedded SQLite default
#   make test   install what is missing, build with ASan+UBSan and -Werror,
#               start a throwaway PostgreSQL, run every test with CTest
#   make build  just build build/jobd
#   make soak   the fault-injection scenarios' long versions (SOAK=1,
#               docs/SCENARIOS.md) on the sanitizer build

JOBS ?= 2
CMAKE ?= cmake

.PHONY: all build run test soak deps clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build build -j $(JOBS)

run: build
	@scripts/run.sh

test: deps
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@scripts/with-pg.sh ctest --test-dir build-asan --output-on-failure -j $(JOBS) $(CTEST_ARGS)

soak: deps
	@$(CMAKE) -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DJOBD_SANITIZE=ON >/dev/null
	@$(CMAKE) --build build-asan -j $(JOBS)
	@SOAK=1 scripts/with-pg.sh ctest --test-dir build-asan -V -L scenario $(CTEST_ARGS)

clean:
	rm -rf build build-asan
