#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench.sh - runs every benchmark (issue 2 §6, issue 4 §12, issue 7 §8, issue 8 D3) and prints the results: scripts/bench.sh BUILD
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/.."
B="$BUILD/bench"
DATA=${KERF_OPENB:-../shared/data/openb}
for b in bench_sched_throughput bench_sched_growth bench_sched_backfill bench_replay; do
        if [ ! -x "$B/$b" ]; then
                echo "bench.sh: $B/$b missing: build the 'benchmarks' target first" >&2
                exit 1
        fi
done
echo "== kerf benchmarks: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -m)"
echo "== a. throughput"
"$B/bench_sched_throughput" examples/fleet-mixed-64.yaml 200000
echo "== a2. queue modes and backfill"
"$B/bench_sched_backfill" examples/fleet-mixed-64.yaml 20000
echo "== b. growth"
"$B/bench_sched_growth" examples/fleet-mixed-64.yaml 50000
echo "== c. placement quality on the openb trace"
if [ -r "$DATA/openb_node_list_gpu_node.csv" ]; then
        "$B/bench_replay" "$DATA" 5
else
        echo "bench.sh: $DATA not found (set KERF_OPENB): skipping c" >&2
fi
echo "== d. kerfd over loopback: GETs/s, list/s, durable submits/s, recovery after kill -9"
if [ -x "$B/bench_kerfd" ]; then
        "$B/bench_kerfd" --seconds 3 --runs 3 --threads 4 --records 100000 --pending 10
else
        echo "bench.sh: $B/bench_kerfd missing: build the 'benchmarks' target first" >&2
        exit 1
fi
echo "== d2. kerfd with 100k pending tasks: task GETs without and with two /metrics scrapers"
if [ -x "$B/bench_metrics" ]; then
        "$B/bench_metrics" --tasks 100000 --seconds 4
else
        echo "bench.sh: $B/bench_metrics missing: build the 'benchmarks' target first" >&2
        exit 1
fi
echo "== d3. kerfd submit latency with 16 tasks running (KERF_BENCH_BASE=KERFD: compare)"
if [ -x "$B/bench_submit" ]; then
        "$B/bench_submit" --submits 2000 --rounds 3 ${KERF_BENCH_BASE:+--base "$KERF_BENCH_BASE"}
else
        echo "bench.sh: $B/bench_submit missing: build the 'benchmarks' target first" >&2
        exit 1
fi
echo "== e. the shim (libkerf-cuda.so) on the simulated driver: launch cost and share accuracy"
for b in bench_launch bench_mem bench_init; do
        if [ ! -x "$B/$b" ]; then
                echo "bench.sh: $B/$b missing: build the 'benchmarks' target first" >&2
                exit 1
        fi
done
"$B/bench_launch"
echo "== f. the shim: added cost per allocate/free pair"
"$B/bench_mem"
echo "== g. the shim: cuInit to first allocation, 256 processes at once"
"$B/bench_init" --procs 256 --rounds 2
