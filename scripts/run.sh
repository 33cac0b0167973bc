#!/usr/bin/env bash
# run.sh - `make run`: start kerfd on this machine (the simulated 8xH200 fleet with MIG on two
# GPUs unless a real NVIDIA GPU is present), state in ./run, submit a short mixed workload
# through the kerf CLI, and leave the daemon running with the next commands printed.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
RUN="$ROOT/run"
case "$BUILD" in /*) BIN="$BUILD/bin" ;; *) BIN="$ROOT/$BUILD/bin" ;; esac
SOCK="$RUN/kerfd.sock"
mkdir -p "$RUN/state"

# A previous `make run` daemon is stopped first; its state (SQLite) is kept and re-adopted.
if [ -f "$RUN/kerfd.pid" ] && kill -0 "$(cat "$RUN/kerfd.pid")" 2>/dev/null; then
	echo "run.sh: stopping the kerfd started by an earlier make run (pid $(cat "$RUN/kerfd.pid"))"
	kill "$(cat "$RUN/kerfd.pid")"
	for _ in $(seq 50); do kill -0 "$(cat "$RUN/kerfd.pid")" 2>/dev/null || break; sleep 0.1; done
fi

cat > "$RUN/kerfd.yaml" <<YAML
# written by scripts/run.sh: a local kerfd for trying kerf (docs/DAEMON.md)
state_dir: $RUN/state
socket: $SOCK
fleet: $ROOT/examples/fleet-8xh200.yaml
limits:
  grace_s: 2
# The demo's tenants run their tasks as root (allow_root): on this simulated node the
# simulated driver's state and the build tree (the shim, the demo program; perhaps in a 0700
# home) are root's. A real node gives each tenant a uid instead (docs/DAEMON.md "Identity");
# kerfd never makes a task admin on its socket either way.
tenants:
  - name: research
    allow_root: true
    cohort: lab
    weight: 2
    quota:
      gpus: {nominal: 4, borrow_limit: 2, lend_limit: 2}
  - name: serving
    allow_root: true
    cohort: lab
    quota:
      gpus: {nominal: 2, lend_limit: 2}
      mig_slices: {nominal: 14}
  - name: interns
    allow_root: true
    quota:
      memory: {nominal: 24GiB}
YAML

"$BIN/kerfd" --check-config -c "$RUN/kerfd.yaml" >/dev/null
setsid "$BIN/kerfd" -c "$RUN/kerfd.yaml" >"$RUN/kerfd.log" 2>&1 < /dev/null &
echo $! > "$RUN/kerfd.pid"
for _ in $(seq 100); do
	[ -S "$SOCK" ] && "$BIN/kerf" --socket "$SOCK" version >/dev/null 2>&1 && break
	if ! kill -0 "$(cat "$RUN/kerfd.pid")" 2>/dev/null; then
		echo "run.sh: kerfd exited at start; its log:" >&2
		cat "$RUN/kerfd.log" >&2
		exit 1
	fi
	sleep 0.1
done
sed -n '1,12p' "$RUN/kerfd.log"

kerf() { "$BIN/kerf" --socket "$SOCK" "$@"; }
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
long='echo "$KERF_TASK_ID on ${CUDA_VISIBLE_DEVICES:-?}"; sleep 3600'

# A software slice enforced by the shim (libkerf-cuda.so) on a CUDA driver-API program: the
# probe fills GPU memory until the driver refuses (it stops at the 4 GiB cap, not at the
# 141 GiB of the H200), then spins kernels for 3 s and reports the share it got (30 %).
SPIN="$BIN/../tests/gpu_spin"
IMG="$ROOT/tests/gpu/spin.kerfsim"
case "$BUILD" in /*) LIB="$BUILD/lib" ;; *) LIB="$ROOT/$BUILD/lib" ;; esac
# On the simulated fleet the probe loads a simulator module image; on a real GPU its PTX.
# (the simulated spin kernel lasts 2 ms of device time: no calibration needed)
IMGARG="" SHAREARG=""
if ! command -v nvidia-smi >/dev/null 2>&1; then
	IMGARG="--image '$IMG'" SHAREARG="--kernel-us 2000 --cycles 1"
fi
if [ -x "$SPIN" ] && [ -r "$LIB/libkerf-cuda.so" ]; then
	say "a 4 GiB / 30 % software slice, enforced by the shim, on a CUDA driver-API program"
	kerf run --tenant research --workload dev --route slice --memory 4GiB --compute 30 \
		--priority 90 --name shim-demo -- /bin/sh -c \
		"'$SPIN' $IMGARG info && '$SPIN' $IMGARG memcap --chunk-mib 256 &&
		 '$SPIN' $IMGARG share --seconds 3 $SHAREARG" || true
fi

say "a short mixed workload from three tenants"
kerf submit --tenant research --queue train --workload training --gpus 2 --priority 50 \
	--name llm-pretrain -- /bin/sh -c "$long"
kerf submit --tenant serving --queue serve --workload inference --tier high --memory 20GiB \
	--compute 25 --priority 80 --name chat-api -- /bin/sh -c "$long"
kerf submit --tenant serving --queue serve --workload inference --memory 16GiB --compute 20 \
	--compute-limit 60 --priority 60 --name embed-svc -- /bin/sh -c "$long"
for i in 0 1 2; do
	kerf submit --tenant research --workload batch --tier exploratory --memory 40GiB \
		--compute 30 --name "sweep-$i" -- /bin/sh -c "$long"
done
kerf submit --tenant interns --workload dev --tier exploratory --memory 10GiB \
	--name notebook -- /bin/sh -c "$long"
kerf submit --tenant interns --workload dev --tier exploratory --memory 20GiB \
	--name notebook-2 -- /bin/sh -c "$long"

say "kerf run: a task that streams its output and exits with its code"
kerf run --tenant research --workload dev --name hello -- \
	/bin/sh -c 'echo "hello from task $KERF_TASK_ID on $CUDA_VISIBLE_DEVICES"' || true

sleep 0.5
say "kerf ls";     kerf ls
say "kerf gpus";   kerf gpus
say "kerf units";  kerf units
say "kerf queue";  kerf queue
for id in $(kerf --json ls --state pending | sed -n 's/^ *"id": \([0-9]*\),*$/\1/p'); do
	say "kerf explain $id"; kerf explain "$id"
done

cat <<EOF

kerfd is running (pid $(cat "$RUN/kerfd.pid"), log $RUN/kerfd.log, state $RUN/state).
Next:
  export KERF_SOCKET=$SOCK
  $BUILD/bin/kerf ls | gpus | units | top | explain ID | logs ID | cancel ID
  $BUILD/bin/kerf run --workload dev -- /bin/sh -c 'echo hi'
  $BUILD/bin/kerf audit verify; $BUILD/bin/kerf audit export; $BUILD/bin/kerf cost
  make poc      (the eight POC acceptance tests on a private simulated kerfd: docs/POC.md)
  curl --unix-socket $SOCK http://localhost/metrics
  $BUILD/bin/kerf-demo examples/fleet-8xh200.yaml      (the scheduler alone, no daemon)
Stop it: kill \$(cat run/kerfd.pid)
EOF
