#!/bin/sh
# slurm_real.sh - the gres.conf and NodeName line kerf generates, fed to a real slurmctld +
# slurmd (Debian's Slurm 22.05): the node must come up idle with kerf's gres counts, and a
# typed MIG gpu must be allocatable. Exit 77 (skip) without Slurm, munge or root.
# usage: slurm_real.sh KERFD KERF SOURCE_DIR
KERFD=$1 KERF=$2 SRC=$3
for b in slurmctld slurmd munged mungekey sinfo srun; do
        command -v $b >/dev/null 2>&1 || { echo "SKIP: $b not installed (apt-get install slurmd slurmctld slurm-client munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (kerfd creates the device files with mknod)"; exit 77; }
B=$(mktemp -d /tmp/kerf-gresit-XXXXXX)
chmod 755 "$B" # tasks (another uid) load the simulated driver from under it; munged checks it
PIDS=""
# kerfd keeps its tasks over a restart: cancel ours before stopping it
cleanup() { [ -n "$K" ] && $K cancel 1 >/dev/null 2>&1; sleep 0.3
            for p in $PIDS; do kill "$p" 2>/dev/null; done; sleep 0.5; rm -rf "$B"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$B"/log/*; do echo "== $f"; tail -15 "$f"; done; exit 1; }
mkdir -p "$B/etc" "$B/state" "$B/spool" "$B/run" "$B/log" "$B/munge" "$B/kerf"
H=$(hostname)
cat > "$B/kerf/kerfd.yaml" <<EOC
state_dir: $B/kerf/state
socket: $B/kerf/kerfd.sock
fleet: $SRC/examples/fleet-8xh200.yaml
node_name: $H
backend:
  simulated: true
policy:
  unenforced_slices: allow
tenants:
  - name: alice
EOC
"$KERFD" --config "$B/kerf/kerfd.yaml" >"$B/log/kerfd.log" 2>&1 & PIDS="$PIDS $!"
K="$KERF --socket $B/kerf/kerfd.sock"
i=0; until $K version >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 50 ] && fail "kerfd did not start"; sleep 0.1; done
# one MIG instance, so the config has typed MIG gpus too
$K submit --tenant alice --workload inference --tier high --mig-profile 1g.18gb -- sleep 30 >/dev/null || fail "submit"
i=0; until $K slurm node-conf 2>/dev/null | grep -q "gpu:1g.18gb:1"; do i=$((i+1)); [ $i -gt 100 ] && fail "no MIG instance"; sleep 0.1; done
$K slurm gres-conf --out "$B/etc/gres.conf" 2>/dev/null || fail "gres-conf"
NODE=$($K slurm node-conf 2>/dev/null) || fail "node-conf"
GRES=${NODE##*Gres=}
mungekey --create --keyfile="$B/munge/munge.key" >/dev/null 2>&1 || fail "mungekey"
chmod 755 "$B/munge"
munged -F --socket="$B/munge/munge.socket.2" --key-file="$B/munge/munge.key" \
        --log-file="$B/log/munged.log" --pid-file="$B/munge/munged.pid" --seed-file="$B/munge/munged.seed" \
        >/dev/null 2>&1 & PIDS="$PIDS $!"
i=0; until [ -S "$B/munge/munge.socket.2" ]; do i=$((i+1)); [ $i -gt 50 ] && fail "munged did not start"; sleep 0.1; done
cat > "$B/etc/slurm.conf" <<EOC
ClusterName=kerfit
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=16837
SlurmdPort=16838
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$B/munge/munge.socket.2
StateSaveLocation=$B/state
SlurmdSpoolDir=$B/spool
SlurmctldPidFile=$B/run/slurmctld.pid
SlurmdPidFile=$B/run/slurmd.pid
SlurmctldLogFile=$B/log/slurmctld.log
SlurmdLogFile=$B/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
GresTypes=gpu,shard
$NODE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOC
export SLURM_CONF="$B/etc/slurm.conf"
setsid slurmctld -D >"$B/log/ctld.out" 2>&1 & PIDS="$PIDS $!"
sleep 0.5
setsid slurmd -D >"$B/log/d.out" 2>&1 & PIDS="$PIDS $!"
i=0; s=""
while [ $i -lt 60 ]; do s=$(sinfo -h -N -o %T 2>/dev/null); [ "$s" = idle ] && break; i=$((i+1)); sleep 0.25; done
[ "$s" = idle ] || fail "node state '$s', not idle"
SG=$(scontrol show node "$H" | sed -n 's/^ *Gres=//p')
echo "kerf Gres=$GRES; slurm Gres=$SG"
case "$SG" in *"gpu:h200-141gb:6"*"gpu:1g.18gb:1"*"shard:h200-141gb:600"*) ;; *) fail "gres '$SG'";; esac
V=$(timeout 20 srun --gres=gpu:1g.18gb:1 printenv CUDA_VISIBLE_DEVICES) || fail "srun MIG gpu"
V2=$(timeout 20 srun --gres=shard:25 printenv SLURM_SHARDS_ON_NODE) || fail "srun shard"
[ "$V2" = 25 ] || fail "shards $V2"
echo "PASS: node idle with $SG; MIG gpu -> CUDA_VISIBLE_DEVICES=$V; 25 shards granted"
