#!/usr/bin/env bash
# podman_cdi.sh BUILD_DIR SOURCE_DIR - podman 4.3 as a real CDI consumer of kerf's specs.
# A throwaway kerfd (simulated fleet, cdi.enabled, a kind unique to this run, spec dir
# /var/run/cdi: the only dirs podman reads) gets `kerf cdi attach` for a 1 GiB slice; podman
# runs a busybox image imported from a tarball (runc, netns none, private storage in a temp
# dir; ../shared/reference/CDI-CI.md) with --device KIND=task-N. Checked: the device nodes,
# the environment, the shim and the region inside; kerf-load probe reads its cap (cuMemGetInfo through
# the shim and the simulated libcuda) and is refused an allocation over it; after the
# container the poststop hook releases the task and kerfd removes the spec. Everything it
# made (kerfd, containers, image, storage, spec files) is removed on exit, also on failure.
# Exit 77 (skipped) where podman cannot run.
set -u
B=$1
S=$2
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (podman with runc, spec dir /var/run/cdi)"
for p in podman runc busybox; do
	command -v $p >/dev/null || skip "$p missing (apt-get install podman runc busybox-static)"
done
BB=$(command -v busybox)
file -L "$BB" 2>/dev/null | grep -q "statically linked" || ldd "$BB" 2>&1 | grep -q "not a dynamic" ||
	skip "busybox is not static (busybox-static)"

T=$(mktemp -d /tmp/kerf-cdi-podman-XXXXXX)
chmod 755 "$T"
KIND="kerftest$$.dev/gpu"
SPECGLOB="/var/run/cdi/kerftest$$.dev-gpu*.json"
KPID=
HOLDER=
MADE_DIR=
[ -d /var/run/cdi ] || MADE_DIR=1
P=(podman --root "$T/storage" --runroot "$T/run" --storage-driver overlay)
export CONTAINERS_CONF=$T/containers.conf CONTAINERS_STORAGE_CONF=$T/storage.conf
cleanup() {
	"${P[@]}" rm -a -f >/dev/null 2>&1
	"${P[@]}" rmi -a -f >/dev/null 2>&1
	[ -n "$KPID" ] && kill "$KPID" 2>/dev/null && wait "$KPID" 2>/dev/null
	[ -n "$HOLDER" ] && kill "$HOLDER" 2>/dev/null
	rm -f $SPECGLOB
	[ -n "$MADE_DIR" ] && rmdir /var/run/cdi 2>/dev/null
	grep -o " $T[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/kerfd.log" ] && tail -20 "$T/kerfd.log"; exit 1; }

cat >"$T/containers.conf" <<EOC
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
netns = "none"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$T/events.log"
EOC
cat >"$T/storage.conf" <<EOC
[storage]
driver = "overlay"
runroot = "$T/run"
graphroot = "$T/storage"
EOC
# the image: busybox, and mount points for the host's libraries (dynamic CUDA programs)
mkdir -p "$T/rootfs/bin" "$T/rootfs/usr/lib" "$T/rootfs/usr/lib64" "$T/rootfs/tmp"
cp "$BB" "$T/rootfs/bin/busybox"
ln -s busybox "$T/rootfs/bin/sh"
ln -s usr/lib "$T/rootfs/lib"
ln -s usr/lib64 "$T/rootfs/lib64"
tar -C "$T/rootfs" -cf "$T/rootfs.tar" . || fail "tar"
"${P[@]}" import "$T/rootfs.tar" localhost/kerf-cdi-bb:latest >/dev/null 2>"$T/import.err" ||
	skip "podman import failed: $(tail -1 "$T/import.err")"
"${P[@]}" run --rm localhost/kerf-cdi-bb /bin/busybox true 2>"$T/run.err" ||
	skip "podman cannot run a container here: $(tail -1 "$T/run.err")"

cat >"$T/kerfd.yaml" <<EOC
state_dir: $T/state
socket: $T/kerfd.sock
fleet: $S/examples/fleet-8xh200.yaml
cdi:
  enabled: true
  kind: $KIND
tenants:
  - name: alice
EOC
"$B/bin/kerfd" --config "$T/kerfd.yaml" >"$T/kerfd.log" 2>&1 &
KPID=$!
K=("$B/bin/kerf" --socket "$T/kerfd.sock")
for _ in $(seq 100); do "${K[@]}" gpus >/dev/null 2>&1 && break; sleep 0.1; done
"${K[@]}" gpus >/dev/null 2>&1 || fail "kerfd did not start"

DEV=$("${K[@]}" cdi attach --tenant alice --route slice --memory 1GiB --compute 20 --lease 60) ||
	fail "kerf cdi attach: $DEV"
ID=${DEV##*=task-}
echo "attached: $DEV"
SPEC=$(ls $SPECGLOB) || fail "no spec file in /var/run/cdi"
REGION=$("${K[@]}" --json show "$ID" | sed -n 's/.*"slice_region": "\([^"]*\)".*/\1/p')
[ -n "$REGION" ] || fail "task $ID has no slice region"
HOLDER=$("${K[@]}" --json show "$ID" | sed -n 's/^  "pid": \([0-9]*\).*/\1/p' | head -1)
[ -n "$HOLDER" ] && kill -0 "$HOLDER" || fail "no live holder process for task $ID"

OUT=$("${P[@]}" run --rm --device "$DEV" -v /usr/lib:/usr/lib:ro -v /usr/lib64:/usr/lib64:ro \
	-v "$B/bin:/kb:ro" localhost/kerf-cdi-bb /bin/sh -c '
	busybox ls -l /dev/nvidiactl /dev/nvidia* | busybox head -3
	busybox env | busybox grep -E "^(CUDA_VISIBLE_DEVICES|KERF_|LD_PRELOAD)" | busybox sort
	busybox test -r "${LD_PRELOAD%% *}" && echo "shim: present ${LD_PRELOAD%% *}"
	busybox test -w "$KERF_SLICE_REGION" && echo "region: writable $KERF_SLICE_REGION"
	/kb/kerf-load probe --window-ms 200 --kernel-us 1000 &&
	/kb/kerf-load hog --chunk 256MiB --hold-s 0' 2>&1)
RC=$?
echo "$OUT" | sed 's/^/  container| /'
[ $RC -eq 0 ] || fail "container exited $RC"
echo "$OUT" | grep -q '^c.* 195, *255 .*/dev/nvidiactl' || fail "no /dev/nvidiactl (c 195:255)"
echo "$OUT" | grep -q '^c.* 195, .*/dev/nvidia[0-9]' || fail "no /dev/nvidiaN"
echo "$OUT" | grep -q '^CUDA_VISIBLE_DEVICES=GPU-' || fail "no CUDA_VISIBLE_DEVICES"
echo "$OUT" | grep -q "^KERF_TASK_ID=$ID\$" || fail "no KERF_TASK_ID"
echo "$OUT" | grep -q '^KERF_SLICE_MEMORY_LIMIT=1073741824$' || fail "no KERF_SLICE_MEMORY_LIMIT"
echo "$OUT" | grep -q '^KERF_SOCKET' && fail "kerfd's socket leaked into the container env"
echo "$OUT" | grep -q '^shim: present .*libkerf-cuda.so' || fail "shim not in the container"
echo "$OUT" | grep -q "^region: writable $REGION\$" || fail "region not in the container"
echo "$OUT" | grep -q '^{"event":"result".*"memory_total":1073741824,' ||
	fail "cap not seen through the driver (kerf-load probe)"
echo "$OUT" | grep -q '^{"event":"hog".*CUDA_ERROR_OUT_OF_MEMORY' ||
	fail "allocations past the cap not refused (kerf-load hog)"

# poststop hook: kerf cdi release -> the task ends -> kerfd removes the spec
for _ in $(seq 50); do [ -e "$SPEC" ] || break; sleep 0.1; done
[ -e "$SPEC" ] && fail "spec $SPEC still there after the container stopped"
ST=$("${K[@]}" --json show "$ID" | sed -n 's/.*"state": "\([^"]*\)".*/\1/p' | head -1)
[ "$ST" = "cancelled" ] || [ "$ST" = "failed" ] || [ "$ST" = "succeeded" ] || fail "task $ID is $ST"
# the holder sees the end and exits by itself (it checks every 2 s)
for _ in $(seq 40); do kill -0 "$HOLDER" 2>/dev/null || break; sleep 0.1; done
kill -0 "$HOLDER" 2>/dev/null && fail "holder $HOLDER still alive after the task ended"
HOLDER=
# the static spec: whole GPUs by UUID (kerf cdi generate --out), read by podman too
UUID=$("${K[@]}" --json gpus | sed -n 's/.*"uuid": "\(GPU-[^"]*\)".*/\1/p' | head -1)
"${K[@]}" cdi generate --kind "$KIND" --out /var/run/cdi >/dev/null || fail "kerf cdi generate"
OUT=$("${P[@]}" run --rm --device "$KIND=$UUID" localhost/kerf-cdi-bb /bin/sh -c \
	'busybox ls /dev/nvidia0 /dev/nvidiactl && echo "vis=$CUDA_VISIBLE_DEVICES sim=$KERF_SIM_DIR"' 2>&1)
echo "$OUT" | sed 's/^/  container| /'
echo "$OUT" | grep -q "^vis=$UUID sim=$T/state/sim\$" || fail "static device $KIND=$UUID not applied"
rm -f $SPECGLOB
echo "PASS: podman ran $DEV; spec removed after the container (task $ID $ST)"
exit 0
