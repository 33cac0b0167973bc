#!/usr/bin/env bash
# tests/fuzz/run.sh - builds the libFuzzer targets with clang (BUILD, default build-fuzz) and
# runs each for SECONDS (default 15), one job each, on BUILD/fuzz/TARGET/corpus (the committed
# corpus copied in, plus what earlier runs found).
# Usage: tests/fuzz/run.sh [BUILD] [SECONDS] [TARGET...]. Skips (exit 0, with a message) when
# clang or its libFuzzer runtime is missing. A crash leaves crash-* in BUILD/fuzz/TARGET/ and
# fails; keep the input in tests/fuzz/corpus/TARGET/ once fixed (it becomes a regression).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
secs=${2:-15}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(task api config fleet module)
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null; then
	echo "fuzz: skipped: no $cc (scripts/deps.sh installs clang and libclang-rt-14-dev)"
	exit 0
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$probe/p.c"
if ! "$cc" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null; then
	echo "fuzz: skipped: $cc has no libFuzzer runtime (install libclang-rt-14-dev)"
	exit 0
fi
areas="src/common;src/slicectl;src/core;src/sched;src/sim;src/backend;src/store;src/cdi;src/daemon;tests/fuzz"
if [ ! -f "$build/CMakeCache.txt" ]; then
	CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKERF_FUZZ=ON \
		"-DKERF_AREAS=$areas" \
		"-DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -Wno-error=string-concatenation" \
		>/dev/null
else
	cmake "$build" >/dev/null # picks up targets added since
fi
for t in "${targets[@]}"; do
	if ! cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "fuzz_$t" -- --no-print-directory \
		>"$probe/build.log" 2>&1; then
		tail -40 "$probe/build.log"
		exit 1
	fi
done
fail=0
for t in "${targets[@]}"; do
	work="$build/fuzz/$t"
	mkdir -p "$work/corpus" # kept between runs: a later run goes on from what this one found
	cp -n tests/fuzz/corpus/"$t"/* "$work/corpus/"
	dict=()
	[ -f "tests/fuzz/$t.dict" ] && dict=("-dict=$PWD/tests/fuzz/$t.dict")
	start=$(date +%s)
	if (cd "$work" && ASAN_OPTIONS=detect_leaks=1 "../fuzz_$t" -max_total_time="$secs" \
		-max_len=8192 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		"${dict[@]}" corpus >log 2>&1); then
		res=ok
	else
		res=FAILED
		fail=1
	fi
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' || echo "?")
	cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -1 | grep -o '[0-9]*' || echo "?")
	echo "fuzz: $t: $res, $runs runs in $(( $(date +%s) - start ))s, cov $cov, corpus $(ls "$work/corpus" | wc -l) (log $work/log)"
	if [ "$res" != ok ]; then
		grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==' "$work/log" | head -20
	fi
done
exit $fail
