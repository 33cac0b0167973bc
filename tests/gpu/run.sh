#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh - the one script for a real NVIDIA GPU machine: build, then READ-ONLY discovery with the
# real libnvidia-ml (never changes MIG, clocks or power; never resets). Exits 0 with
# "SKIPPED: no NVIDIA GPU" where there is no driver.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KERF_GPU_BUILD:-$root/build-gpu}

if ! command -v nvidia-smi >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
        echo "SKIPPED: no NVIDIA GPU (neither nvidia-smi nor libnvidia-ml.so.1 found)"
        exit 0
fi
if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi -L || true # read-only listing, for the record
fi

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" --target gpu_discover >/dev/null

# Make sure the simulator cannot answer instead of the real driver.
unset KERF_SIM_DIR KERF_NVML_LIBRARY
rc=0
"$build/tests/gpu_discover" || rc=$?
if [ "$rc" -eq 77 ]; then
        exit 0 # gpu_discover printed "SKIPPED: no NVIDIA GPU (...)"
fi
exit "$rc"
