# Makefile - the two commands (run, test) and friends over CMake + CTest.
BUILD   ?= build
ASAN    ?= build-asan
FUZZ    ?= build-fuzz
JOBS    ?= $(shell nproc)
CMAKE   ?= cmake
SRCS     = $(shell git ls-files '*.c' '*.h' 2>/dev/null | grep -v '^tests/fakes/include/')

.PHONY: all deps build test asan bench run format format-check clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/CMakeCache.txt:
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@$(CMAKE) --build $(BUILD) -j $(JOBS) -- --no-print-directory

format-check:
	@out=$$(clang-format --dry-run $(SRCS) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out" | head -40; \
	echo "format-check: run 'make format' (clang-format)"; exit 1; fi

format:
	@clang-format -i $(SRCS)

test: build format-check
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	@$(CMAKE) -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=Debug -DKERF_SANITIZE=ON >/dev/null
	@$(CMAKE) --build $(ASAN) -j $(JOBS) -- --no-print-directory
	@cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS) -LE nosan

bench: build
	@$(CMAKE) --build $(BUILD) --target benchmarks -- --no-print-directory
	@scripts/bench.sh $(BUILD)

# chaos: the long form of tests/chaos (kill -9 of kerfd, CHAOS_CYCLES cycles; CHAOS_SEED=S
# replays a failure). fuzz: tests/fuzz's libFuzzer targets with clang, FUZZ_SECONDS each.
.PHONY: chaos fuzz
chaos: build
	@$(CMAKE) --build $(BUILD) --target test_chaos -- --no-print-directory
	@$(BUILD)/tests/test_chaos --cycles $(or $(CHAOS_CYCLES),200) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

fuzz: deps
	@tests/fuzz/run.sh $(FUZZ) $(or $(FUZZ_SECONDS),15)

run: build
	@scripts/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN)
