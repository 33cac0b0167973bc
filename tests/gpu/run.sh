#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the one script for a real NVIDIA GPU machine: build, READ-ONLY discovery with the real
# libnvidia-ml, then the shim (libkerf-cuda.so) on the real driver: memory cap and views, compute
# shares, a 30/70 split of two slices, the added launch cost, kerf-load (probe alone and in a
# slice, a short serve) and PyTorch if installed; then, reported only, bench_init's cuInit-to-first-
# allocation with 256 processes on the SIMULATED driver using this machine's cores. One table
# at the end; exit 1 on any failed check. Exits 0 with "SKIPPED: no NVIDIA GPU" where there is no
# driver. Under 8 minutes.
#
# Read-only on the card: it never changes MIG mode, clocks, power limits, persistence or compute
# mode and never resets anything (nvidia-smi is only used for -L and --query-*). The only things
# it does to the GPU are what any CUDA program does: a context, allocations, kernels.
#
#   tests/gpu/run.sh           real GPU (build in $KERF_GPU_BUILD, default <root>/build-gpu)
#   tests/gpu/run.sh --sim     the same checks on the simulated driver (kerf-sim) with the shim,
#                              on an already built tree in $KERF_GPU_BUILD (ctest gpu_run_sim):
#                              kernels come from tests/gpu/spin.kerfsim instead of PTX; the
#                              compute and launch-cost figures are reported, not judged, unless
#                              KERF_GPU_SIM_STRICT=1.
# Knobs: KERF_GPU_SHARE_SECONDS (5; 2 with --sim), KERF_GPU_LAUNCH_BAR_NS (200: added median
# cost per launch allowed), KERF_GPU_TIMEOUT (per command, 180 s).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KERF_GPU_BUILD:-$root/build-gpu}
sim=0
if [ "${1:-}" = "--sim" ]; then
        sim=1
fi
GIB=1073741824
CAP=$((4 * GIB))
tmo=${KERF_GPU_TIMEOUT:-180}
bar_ns=${KERF_GPU_LAUNCH_BAR_NS:-200}
strict=1
if [ "$sim" -eq 1 ] && [ "${KERF_GPU_SIM_STRICT:-0}" != "1" ]; then
        strict=0
fi

# ---- discovery and build (real GPU) -------------------------------------------------------------
if [ "$sim" -eq 0 ]; then
        if ! command -v nvidia-smi >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
                echo "SKIPPED: no NVIDIA GPU (neither nvidia-smi nor libnvidia-ml.so.1 found)"
                exit 0
        fi
        if command -v nvidia-smi >/dev/null 2>&1; then
                nvidia-smi -L || true # read-only listing, for the record
        fi
        areas='src/common;src/slicectl;src/core;src/sched;src/sim;src/backend;src/shim;src/load;tests/gpu;bench'
        if ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DKERF_AREAS=$areas" >"$build.cmake.log" 2>&1 &&
                ! cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.cmake.log" 2>&1; then
                tail -20 "$build.cmake.log"
                echo "FAILED: cmake configure (log: $build.cmake.log)"
                exit 1
        fi
        if ! cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target gpu_discover kerf_shim gpu_spin gpu_mkregion kerf-load >"$build.build.log" 2>&1; then
                tail -30 "$build.build.log"
                echo "FAILED: build (log: $build.build.log)"
                exit 1
        fi
        # Make sure the simulator cannot answer instead of the real driver.
        unset KERF_SIM_DIR KERF_NVML_LIBRARY
        discover_rc=0
        "$build/tests/gpu_discover" || discover_rc=$?
        if [ "$discover_rc" -eq 77 ]; then
                exit 0 # gpu_discover printed "SKIPPED: no NVIDIA GPU (...)"
        fi
fi

shim=$build/lib/libkerf-cuda.so
spin=$build/tests/gpu_spin
mkregion=$build/tests/gpu_mkregion
for f in "$shim" "$spin" "$mkregion"; do
        if [ ! -e "$f" ]; then
                echo "FAILED: $f missing (build the tree first)"
                exit 1
        fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/kerf-gpu-XXXXXX") || exit 1
chmod 700 "$work"
trap 'rm -rf "$work"' EXIT INT TERM
unset LD_PRELOAD KERF_SLICE_REGION

image_args=""
secs=${KERF_GPU_SHARE_SECONDS:-5}
warm=1000
if [ "$sim" -eq 1 ]; then
        if [ ! -x "$build/bin/kerf-sim" ] || [ ! -e "$build/lib/libcuda.so.1" ]; then
                echo "FAILED: --sim needs kerf-sim and the simulated libcuda.so.1 in $build"
                exit 1
        fi
        cat >"$work/fleet.yaml" <<EOF
nodes:
  - name: node0
    cpus: 8
    memory: 64GiB
    driver: "580.65.06"
    cuda: "13.0"
    gpus:
      - {model: H200-141GB, count: 1}
EOF
        export KERF_SIM_DIR="$work/node"
        if ! "$build/bin/kerf-sim" create --fleet "$work/fleet.yaml" >/dev/null; then
                echo "FAILED: kerf-sim create"
                exit 1
        fi
        export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        image_args="--image $root/tests/gpu/spin.kerfsim"
        secs=${KERF_GPU_SHARE_SECONDS:-2}
        warm=500
fi

# ---- helpers ------------------------------------------------------------------------------------
fails=0
table=$work/table
: >"$table"
# row CHECK EXPECTED MEASURED RESULT (PASS, FAIL, WARN, INFO)
row() {
        printf '%-48s %-24s %-36s %s\n' "$1" "$2" "$3" "$4" >>"$table"
        if [ "$4" = FAIL ]; then
                fails=$((fails + 1))
        fi
}
# judged CHECK EXPECTED MEASURED OK(0|1): PASS/FAIL; with --sim (not strict) INFO / "INFO (off)"
judged() {
        if [ "$strict" -eq 1 ]; then
                if [ "$4" -eq 1 ]; then r=PASS; else r=FAIL; fi
        else
                if [ "$4" -eq 1 ]; then r=INFO; else r="INFO (off)"; fi
        fi
        row "$1" "$2" "$3" "$r"
}
# field "LINE" KEY: the value of KEY=value in LINE (empty when absent)
field() {
        printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
isnum() {
        case "$1" in '' | *[!0-9.]*) return 1 ;; *) return 0 ;; esac
}
# abs_le A B TOL: |A - B| <= TOL (decimals)
abs_le() {
        awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}
run() { # run [timeout] CMD...: with the per-command timeout when `timeout` exists
        if command -v timeout >/dev/null 2>&1; then
                timeout "$tmo" "$@"
        else
                "$@"
        fi
}
# spin_as REGION|- ARGS...: spin with the shim in slice REGION (or "-": without the shim)
spin_as() {
        reg=$1
        shift
        if [ "$reg" = "-" ]; then
                # shellcheck disable=SC2086
                run "$spin" $image_args "$@"
        else
                # shellcheck disable=SC2086
                LD_PRELOAD="$shim" KERF_SLICE_REGION="$reg" KERF_SLICE_ABI=2 run "$spin" $image_args "$@"
        fi
}
# region NAME MEMORY COMPUTE_PCT: creates $work/NAME.slice and prints its path
region() {
        "$mkregion" "$work/$1.slice" "$2" "$dev_total" "$3" || return 1
        echo "$work/$1.slice"
}
# expect_line OUTPUT KEY FIELDS...: the line starting with KEY, with every field numeric or set
expect_line() {
        out=$1
        key=$2
        shift 2
        l=$(printf '%s\n' "$out" | grep "^$key " | head -1)
        [ -n "$l" ] || return 1
        for f in "$@"; do
                v=$(field "$l" "$f")
                [ -n "$v" ] || return 1
        done
        printf '%s\n' "$l"
}

# ---- the device -----------------------------------------------------------------------------
out=$(spin_as - info 2>&1)
info=$(expect_line "$out" INFO uuid name total dev_total sms clock_khz driver procaddr) || {
        printf '%s\n' "$out"
        echo "FAILED: no usable CUDA device (spin info); is MIG enabled without instances?"
        exit 1
}
uuid=$(field "$info" uuid)
dev_total=$(field "$info" dev_total)
echo "device: $info"
# Every run below uses this one device; the shim's NVML views match it by this UUID.
export CUDA_VISIBLE_DEVICES="$uuid"
if [ "$sim" -eq 0 ] && command -v nvidia-smi >/dev/null 2>&1; then
        others=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -c . || true)
        echo "other compute processes on the GPUs now: $others (shares assume an otherwise idle GPU)"
fi

if [ "$sim" -eq 0 ]; then
        if [ "$discover_rc" -eq 0 ]; then r=PASS; else r=FAIL; fi
        row "discovery: gpu_discover (read-only NVML)" "exit 0" "exit $discover_rc" "$r"
fi

# ---- 1. memory cap and views ----------------------------------------------------------------
reg=$(region mem "$CAP" 100) || exit 1
out=$(spin_as "$reg" memcap 2>&1)
if l=$(expect_line "$out" MEMCAP total free dev_total allocated err); then
        total=$(field "$l" total)
        free=$(field "$l" free)
        dt=$(field "$l" dev_total)
        alloc=$(field "$l" allocated)
        err=$(field "$l" err)
        ok=0; [ "$total" = "$CAP" ] && ok=1
        row "mem: cuMemGetInfo total = cap" "$CAP" "$total" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
        ok=0; [ "$dt" = "$CAP" ] && ok=1
        row "mem: cuDeviceTotalMem = cap" "$CAP" "$dt" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
        ok=0; [ "$err" = CUDA_ERROR_OUT_OF_MEMORY ] && [ "$alloc" -le "$CAP" ] && ok=1
        row "mem: fill stops with OUT_OF_MEMORY <= cap" "OOM, <= $CAP" "$err, $alloc" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
        ok=0; [ "$alloc" -le "$free" ] && [ $((free - alloc)) -le $((2 * 1048576)) ] && ok=1
        row "mem: allocatable = cuMemGetInfo free" "$free (-2 MiB)" "$alloc" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
else
        printf '%s\n' "$out" | tail -5
        row "mem: spin memcap under the shim" "MEMCAP line" "no MEMCAP line" FAIL
fi

# ---- 2. compute shares --------------------------------------------------------------------------
out=$(spin_as - calibrate --kernel-us 2000 2>&1)
cycles=
kus=
if l=$(expect_line "$out" CALIB cycles kernel_us); then
        cycles=$(field "$l" cycles)
        kus=$(field "$l" kernel_us)
        echo "spin kernel: $cycles cycles = $kus us alone"
else
        printf '%s\n' "$out" | tail -5
        row "compute: calibrate the spin kernel" "CALIB line" "no CALIB line" FAIL
fi
# share_check NAME TARGET LINE
share_check() {
        s=$(field "$3" share_pct)
        nv=$(field "$3" nvml_pct)
        wmin=$(field "$3" win_min)
        wmax=$(field "$3" win_max)
        ok=0
        abs_le "$s" "$2" 5 && ok=1
        judged "$1 (events+wall)" "$2 +-5 %" "$s % (1 s windows $wmin..$wmax)" "$ok"
        if [ "$nv" = NA ]; then
                row "$1 (NVML process util)" "$2 +-10 %" "not available" INFO
        elif abs_le "$nv" "$2" 10; then
                row "$1 (NVML process util)" "$2 +-10 %" "$nv %" "$([ $strict -eq 1 ] && echo PASS || echo INFO)"
        else
                row "$1 (NVML process util)" "$2 +-10 %" "$nv %" WARN
        fi
}
share_args="share --seconds $secs --warmup-ms $warm --kernel-us ${kus:-2000} --cycles ${cycles:-0}"
if [ -n "$cycles" ]; then
        for pct in 30 50 70; do
                reg=$(region "c$pct" "$dev_total" "$pct") || exit 1
                # shellcheck disable=SC2086
                out=$(spin_as "$reg" $share_args 2>&1)
                if l=$(expect_line "$out" SHARE wall_ms busy_ms share_pct win_min win_max launches kernel_us nvml_pct) &&
                        isnum "$(field "$l" share_pct)"; then
                        share_check "compute: one slice at $pct %" "$pct" "$l"
                else
                        printf '%s\n' "$out" | tail -5
                        row "compute: one slice at $pct %" "SHARE line" "no SHARE line" FAIL
                fi
        done

        # ---- 3. two slices, 30/70, at the same time ----
        r30=$(region s30 "$dev_total" 30) || exit 1
        r70=$(region s70 "$dev_total" 70) || exit 1
        # shellcheck disable=SC2086
        spin_as "$r30" $share_args >"$work/s30.out" 2>&1 &
        p30=$!
        # shellcheck disable=SC2086
        spin_as "$r70" $share_args >"$work/s70.out" 2>&1 &
        p70=$!
        wait "$p30"
        wait "$p70"
        sum=0
        for pct in 30 70; do
                out=$(cat "$work/s$pct.out")
                if l=$(expect_line "$out" SHARE share_pct nvml_pct win_min win_max) && isnum "$(field "$l" share_pct)"; then
                        share_check "split: slice $pct % of 30/70" "$pct" "$l"
                        sum=$(awk -v a="$sum" -v b="$(field "$l" share_pct)" 'BEGIN { print a + b }')
                else
                        printf '%s\n' "$out" | tail -5
                        row "split: slice $pct % of 30/70" "SHARE line" "no SHARE line" FAIL
                fi
        done
        row "split: sum of the two shares" "<= 105 % (time-sliced)" "$sum %" INFO
fi

# ---- 4. added launch cost ---------------------------------------------------------------------
reg=$(region launch "$dev_total" 100) || exit 1
d1=
s1=
for _ in 1 2; do
        for mode in - "$reg"; do
                out=$(spin_as "$mode" launch --n 20000 2>&1)
                l=$(expect_line "$out" LAUNCH median_ns p90_ns) || {
                        printf '%s\n' "$out" | tail -5
                        continue
                }
                m=$(field "$l" median_ns)
                if [ "$mode" = "-" ]; then
                        [ -z "$d1" ] || [ "$m" -lt "$d1" ] && d1=$m
                else
                        [ -z "$s1" ] || [ "$m" -lt "$s1" ] && s1=$m
                fi
        done
done
if [ -n "$d1" ] && [ -n "$s1" ]; then
        added=$((s1 - d1))
        ok=0; [ "$added" -le "$bar_ns" ] && ok=1
        judged "launch: added median cost per cuLaunchKernel" "<= $bar_ns ns" "$added ns ($d1 -> $s1)" "$ok"
else
        row "launch: cuLaunchKernel cost" "LAUNCH lines" "missing" FAIL
fi

# ---- 5. PyTorch, when installed ------------------------------------------------------------------
if [ "$sim" -eq 0 ] && command -v python3 >/dev/null 2>&1 &&
        python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
        reg=$(region torch "$CAP" 100) || exit 1
        cat >"$work/torch_cap.py" <<'EOF'
import sys
import torch

cap = int(sys.argv[1])
free, total = torch.cuda.mem_get_info()
print("TORCH total=%d free=%d" % (total, free), flush=True)
x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")  # below the cap: must work
oom_type = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
try:
    y = torch.empty(cap + (1 << 30), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    print("TORCH oom=none", flush=True)
except oom_type as e:
    print("TORCH oom=%s" % ("yes" if "out of memory" in str(e).lower() else "other"), flush=True)
del x
print("TORCH done=1", flush=True)
EOF
        rc=0
        out=$(LD_PRELOAD="$shim" KERF_SLICE_REGION="$reg" KERF_SLICE_ABI=2 run python3 "$work/torch_cap.py" "$CAP" 2>&1) || rc=$?
        tl=$(printf '%s\n' "$out" | grep '^TORCH total=' | head -1)
        total=$(field "$tl" total)
        oom=$(printf '%s\n' "$out" | sed -n 's/^TORCH oom=//p' | head -1)
        ok=0; [ "$total" = "$CAP" ] && ok=1
        row "torch: mem_get_info() total = cap" "$CAP" "${total:-none}" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
        ok=0; [ "$oom" = yes ] && [ "$rc" -eq 0 ] && ok=1
        row "torch: allocation past cap -> OOM error" "OutOfMemoryError, exit 0" "oom=${oom:-none}, exit $rc" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
        if [ "$ok" -eq 0 ]; then
                printf '%s\n' "$out" | tail -10
        fi
else
        row "torch" "import torch + CUDA" "not available" INFO
fi

# ---- 6. kerf-load (the POC's workload program): probe alone, probe in a slice, a short serve ----
load=$build/bin/kerf-load
# jfield LINE KEY: the value of "KEY" in a kerf-load JSON line (numbers and plain strings)
jfield() {
        printf '%s\n' "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" | head -1
}
# load_as REGION|- ARGS...: kerf-load with the shim in slice REGION (or "-": without it)
load_as() {
        reg=$1
        shift
        if [ "$reg" = "-" ]; then
                run "$load" "$@"
        else
                LD_PRELOAD="$shim" KERF_SLICE_REGION="$reg" KERF_SLICE_ABI=2 run "$load" "$@"
        fi
}
want_kernels=ptx
if [ "$sim" -eq 1 ]; then
        want_kernels=kerfsim
fi
if [ ! -x "$load" ]; then
        if [ "$sim" -eq 1 ]; then r=INFO; else r=FAIL; fi
        row "kerf-load" "$load built" "missing" "$r"
else
        out=$(load_as - probe --window-ms 2000 --warmup-ms 500 2>&1)
        st=$(printf '%s\n' "$out" | grep '^{"event":"start"' | head -1)
        res=$(printf '%s\n' "$out" | grep '^{"event":"result"' | head -1)
        if [ -n "$res" ]; then
                k=$(jfield "$st" kernels)
                ok=0; [ "$k" = "$want_kernels" ] && ok=1
                row "kerf-load: spin kernels" "$want_kernels" "$k" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
                tot=$(jfield "$res" memory_total)
                fr=$(jfield "$res" memory_free)
                big=$(jfield "$res" largest_alloc)
                sh=$(jfield "$res" achieved_share)
                ok=0; [ "$tot" = "$dev_total" ] && ok=1
                row "kerf-load probe: memory_total (no shim)" "$dev_total" "$tot" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
                ok=0; [ "$big" -le "$fr" ] && [ $((fr - big)) -le $((64 * 1048576)) ] && ok=1
                row "kerf-load probe: largest alloc ~ free" "$fr (-64 MiB)" "$big" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
                ok=0; awk -v s="$sh" 'BEGIN { exit !(s >= 0.9 && s <= 1.02) }' && ok=1
                judged "kerf-load probe: share alone" "0.90..1.02" "$sh" "$ok"
        else
                printf '%s\n' "$out" | tail -5
                row "kerf-load probe (no shim)" "result line" "none" FAIL
        fi
        reg=$(region load50 "$CAP" 50) || exit 1
        out=$(load_as "$reg" probe --window-ms 3000 --warmup-ms 1000 2>&1)
        res=$(printf '%s\n' "$out" | grep '^{"event":"result"' | head -1)
        if [ -n "$res" ]; then
                tot=$(jfield "$res" memory_total)
                big=$(jfield "$res" largest_alloc)
                sh=$(jfield "$res" achieved_share)
                ok=0; [ "$tot" = "$CAP" ] && [ "$big" -le "$CAP" ] && ok=1
                row "kerf-load probe in slice: total, largest" "$CAP, <= $CAP" "$tot, $big" "$([ $ok -eq 1 ] && echo PASS || echo FAIL)"
                ok=0; abs_le "$sh" 0.5 0.05 && ok=1
                judged "kerf-load probe in slice: share at 50 %" "0.50 +-0.05" "$sh" "$ok"
        else
                printf '%s\n' "$out" | tail -5
                row "kerf-load probe (shim, 50 %)" "result line" "none" FAIL
        fi
        out=$(load_as - serve --rate 100 --kernels 4 --kernel-us 500 --seconds 3 --mem 1GiB 2>&1)
        res=$(printf '%s\n' "$out" | grep '^{"event":"result"' | head -1)
        if [ -n "$res" ]; then
                e=$(jfield "$res" errors)
                p50=$(jfield "$res" p50_ms)
                p99=$(jfield "$res" p99_ms)
                tp=$(jfield "$res" throughput)
                ok=0; [ "$e" = 0 ] && awk -v p="$p50" -v t="$tp" 'BEGIN { exit !(p >= 2.0 && t >= 95 && t <= 105) }' && ok=1
                judged "kerf-load serve 100/s x 4 x 0.5 ms" "0 errors, p50 >= 2 ms, 100/s +-5" "$e err, p50 $p50 p99 $p99 ms, $tp/s" "$ok"
        else
                printf '%s\n' "$out" | tail -5
                row "kerf-load serve" "result line" "none" FAIL
        fi
fi

# ---- 7. cuInit to first allocation, 256 processes at once (the SIMULATED driver on this machine's
# ---- cores: issue 7's target is for it; the 2-core development VM cannot tell the shim's share
# ---- from waiting for a CPU). Reported, never failing the run: the checks above are what the
# ---- real driver proves.
if [ "$sim" -eq 0 ]; then
        cpus=$(nproc 2>/dev/null || echo "?")
        if cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target bench_init >"$build.bench.log" 2>&1; then
                out=$(run "$build/bench/bench_init" --procs 256 --rounds 2 2>&1)
                d=$(printf '%s\n' "$out" | awk '$1 == "direct" { print $6 }' | head -1)
                w=$(printf '%s\n' "$out" | awk '$1 == "shim" { print $6 }' | head -1)
                if isnum "$d" && isnum "$w"; then
                        r=INFO; awk -v w="$w" 'BEGIN { exit !(w <= 50) }' && r=PASS
                        [ "$r" = PASS ] || r="WARN (target missed)"
                        row "cuInit->alloc p99, 256 procs, SIM driver, $cpus CPUs" "shim <= 50 ms" "direct $d, shim $w ms" "$r"
                else
                        printf '%s\n' "$out" | tail -5
                        row "cuInit->alloc, 256 procs (SIM driver)" "bench_init table" "none" WARN
                fi
        else
                tail -5 "$build.bench.log"
                row "cuInit->alloc, 256 procs (SIM driver)" "bench_init built" "build failed" WARN
        fi
fi

# ---- the table ---------------------------------------------------------------------------------
echo
if [ "$sim" -eq 1 ]; then
        echo "== kerf shim on the SIMULATED driver (run.sh --sim; compute/launch figures not judged unless KERF_GPU_SIM_STRICT=1)"
else
        echo "== kerf shim on the real driver: $(field "$info" name) $uuid, driver $(field "$info" driver)"
fi
printf '%-48s %-24s %-36s %s\n' "check" "expected" "measured" "result"
cat "$table"
if [ "$fails" -gt 0 ]; then
        echo "FAILED: $fails check(s)"
        exit 1
fi
echo "OK"
exit 0
