#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# run.sh - spank_kerf.so on a real Slurm: munge, slurmctld and two slurmd nodes (n1, n2;
# multiple-slurmd mode) on this machine, each node with its own kerfd on a simulated fleet of
# 2 GPUs. Usage: run.sh BUILD_DIR SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (says why).
# Every daemon is started here and killed here by its pid, also on failure.
set -u
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (slurmd, device files)"
for b in slurmctld slurmd munged mungekey srun sbatch salloc scancel squeue sinfo scontrol curl python3; do
  command -v $b >/dev/null || skip "$b not installed (scripts/deps.sh installs slurmctld slurmd slurm-client munge)"
done
[ -f /usr/lib/x86_64-linux-gnu/slurm-wlm/cli_filter_lua.so ] || [ -n "$(find /usr/lib -name cli_filter_lua.so 2>/dev/null | head -1)" ] || skip "cli_filter_lua.so missing"
for f in lib/spank_kerf.so bin/kerfd bin/kerf-load lib/libkerf-cuda.so; do
  [ -e "$BUILD/$f" ] || skip "$BUILD/$f not built (libslurm-dev gives slurm/spank.h)"
done

B=$(mktemp -d /tmp/kerf-slurm-XXXXXX)
chmod 755 $B # munged wants execute for all on its socket's parents
PIDS=() FAILS=0 T0=$(date +%s)
export SLURM_CONF=$B/etc/slurm.conf
cleanup() {
  scancel --quiet --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
  sleep 0.5
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  # slurmstepd of this cluster only: their environment names our slurm.conf
  for e in /proc/[0-9]*/environ; do
    p=${e#/proc/}; p=${p%/environ}
    tr '\0' '\n' 2>/dev/null <"$e" | grep -qx "SLURM_CONF=$B/etc/slurm.conf" && kill -9 "$p" 2>/dev/null
  done
  if [ $FAILS -ne 0 ]; then
    echo "--- logs kept in $B/log"; tail -n 30 "$B"/log/*.log "$B"/n*/kerfd.log 2>/dev/null | tail -n 150
  else
    rm -rf "$B"
  fi
}
trap cleanup EXIT
# every client call is bounded: a hung step fails the test instead of hanging it
srun() { timeout 40 /usr/bin/srun "$@"; }
salloc() { timeout 40 /usr/bin/salloc "$@"; }
sbatch() { timeout 20 /usr/bin/sbatch "$@"; }
ok() { echo "ok   - $*"; }
bad() { echo "FAIL - $*"; FAILS=$((FAILS + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }
api() { curl -s --max-time 5 --unix-socket "$B/$1/kerfd.sock" "http://x$2"; }

mkdir -p $B/{etc,state,log,run,munge,spool/n1,spool/n2,n1/dev,n2/dev}
# ---- munge
mungekey --create --keyfile=$B/munge/munge.key >/dev/null 2>&1 || skip "mungekey failed"
chmod 755 $B/munge
setsid munged -F --socket=$B/munge/munge.socket.2 --key-file=$B/munge/munge.key \
  --log-file=$B/munge/munged.log --pid-file=$B/munge/munged.pid --seed-file=$B/munge/munged.seed \
  >$B/munge/munged.out 2>&1 &
PIDS+=($!)
for i in $(seq 50); do [ -S $B/munge/munge.socket.2 ] && break; sleep 0.1; done
[ -S $B/munge/munge.socket.2 ] || { FAILS=1; echo "FAIL - munged did not start"; exit 1; }

# ---- one kerfd per node, each on its own simulated fleet of 2 H200 (n1: GPU 0 in MIG mode)
for n in n1 n2; do
  cat > $B/$n/fleet.yaml <<EOT
nodes:
  - name: $n
    cpus: 2
    memory: 16GiB
    driver: "550.54.15"
    cuda: "12.4"
    gpus:
$([ $n = n1 ] && echo "      - {model: H200-141GB, count: 1, mig: true, numa: 0, nvlink: nvswitch}")
      - {model: H200-141GB, count: $([ $n = n1 ] && echo 1 || echo 2), numa: 0, nvlink: nvswitch}
EOT
  cat > $B/$n/kerfd.yaml <<EOT
state_dir: $B/$n/state
socket: $B/$n/kerfd.sock
fleet: $B/$n/fleet.yaml
backend:
  simulated: true
limits:
  grace_s: 1
  tick_ms: 50
  min_lease_s: 5
tenants:
  - name: root
    allow_root: true
    max_priority: 1000
    max_tier: high
  - name: physics
    allow_root: true
    max_tier: high
EOT
done
start_kerfd() {
  setsid "$BUILD/bin/kerfd" -c $B/$1/kerfd.yaml >>$B/$1/kerfd.log 2>&1 &
  PIDS+=($!); eval "KPID_$1=$!"
  for i in $(seq 100); do [ -S $B/$1/kerfd.sock ] && api $1 /v1/health >/dev/null && return 0; sleep 0.1; done
  echo "kerfd $1 did not start"; tail $B/$1/kerfd.log; exit 1
}
# n2's store fails to record a join member while $B/failjoin exists (the refused-join case)
start_kerfd n1; KERFD_TEST_STORE_FAIL="member_add@$B/failjoin" start_kerfd n2

# ---- slurm: 2 nodes, 2 GPUs each, 4 shards per GPU; gres.conf and the NodeName lines come
# from each node's kerfd (kerf slurm gres-conf / node-conf; its device files in <state>/dev)
# a 1g.18gb MIG instance on n1 (a kerf task makes it; it stays, free, after the task)
mt=$(curl -s --unix-socket $B/n1/kerfd.sock -d '{"tenant":"root","route":"mig","mig_profile":"1g.18gb","command":["/bin/sleep","30"]}' http://x/v1/tasks | json 'd["id"]')
for i in $(seq 100); do [ "$(api n1 /v1/node | json 'len(d["mig"])')" = 1 ] && break; sleep 0.1; done
curl -s --unix-socket $B/n1/kerfd.sock -X POST http://x/v1/tasks/$mt/cancel >/dev/null
gen() { "$BUILD/bin/kerf" --socket $B/$1/kerfd.sock slurm $2 --node $1 --shards-per-gpu 4 2>>$B/log/gen.err; }
for n in n1 n2; do
  gen $n gres-conf >> $B/etc/gres.conf || { FAILS=1; echo "FAIL - kerf slurm gres-conf $n"; exit 1; }
  gen $n node-conf > $B/$n/node.line || { FAILS=1; echo "FAIL - kerf slurm node-conf $n"; exit 1; }
done
H=$(hostname)
cat > $B/etc/slurm.conf <<EOT
ClusterName=kerftest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=16817
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$B/munge/munge.socket.2
StateSaveLocation=$B/state
SlurmdSpoolDir=$B/spool/%n
SlurmctldPidFile=$B/run/slurmctld.pid
SlurmdPidFile=$B/run/slurmd.%n.pid
SlurmctldLogFile=$B/log/slurmctld.log
SlurmdLogFile=$B/log/slurmd.%n.log
PlugStackConfig=$B/etc/plugstack.conf
CliFilterPlugins=lua
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=2
OverTimeLimit=0
GresTypes=gpu,shard
$(grep -v '^#' $B/n1/node.line) NodeHostname=$H NodeAddr=127.0.0.1 Port=17001 State=UNKNOWN
$(grep -v '^#' $B/n2/node.line) NodeHostname=$H NodeAddr=127.0.0.1 Port=17002 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOT
PLUG="required $BUILD/lib/spank_kerf.so socket=$B/%n/kerfd.sock shards_per_gpu=4 lease_s=5 tenant_map=$B/etc/tenants"
echo "$PLUG" > $B/etc/plugstack.conf
echo "physics physics" > $B/etc/tenants
sed "s/^local SHARDS_PER_GPU = .*/local SHARDS_PER_GPU = 4/" $SRC/packaging/slurm/cli_filter.lua > $B/etc/cli_filter.lua

setsid slurmctld -D >$B/log/slurmctld.out 2>&1 &
PIDS+=($!)
sleep 0.3
start_slurmd() { setsid slurmd -D -N $1 >>$B/log/slurmd.$1.out 2>&1 & PIDS+=($!); eval "SDPID_$1=$!"; }
start_slurmd n1; start_slurmd n2
up=0
for i in $(seq 150); do
  [ "$(sinfo -h -N -o %T 2>/dev/null | sort -u | tr -d '\n')" = idle ] && { up=1; break; }
  sleep 0.2
done
[ $up = 1 ] || { FAILS=1; echo "FAIL - nodes did not come up: $(sinfo -h -N -o '%N %T %E' 2>&1)"; exit 1; }
ok "slurmctld + slurmd n1, n2 idle after $(( $(date +%s) - T0 )) s"

GPUMEM=$(api n1 '/v1/gpus?limit=1' | json 'd["items"][0]["memory_total"]')

# ---- a time limit: started first (Slurm enforces it within ~30 s of the minute)
TL=$(sbatch --parsable -w n2 -t 1 --gres=shard:1 -o $B/tl.out --wrap "srun sleep 300")

# ---- srun --gres=shard:2 runs under the shim with the shard rule's cap
out=$(srun -w n1 --gres=shard:2 bash -c 'echo KT=$KERF_TASK_ID KIND=$KERF_UNIT_KIND; exec '"$BUILD"'/bin/kerf-load probe --window-ms 100 --warmup-ms 0' 2>$B/e1)
tot=$(echo "$out" | grep '"result"' | json 'd["memory_total"]' 2>/dev/null)
want=$(( GPUMEM / 4 * 2 + GPUMEM % 4 * 2 / 4 )) # include/kerf/shard.h
check "shard:2 -> slice; cuMemGetInfo total $tot = 2/4 of the GPU ($want)" [ "$tot" = "$want" ]
check "shard:2 -> KERF_UNIT_KIND=slice" grep -q "KIND=slice" <<<"$out"
kt=$(echo "$out" | sed -n 's/^KT=\([0-9]*\).*/\1/p')
task=$(api n1 /v1/tasks/$kt)
check "n1 kerfd task $kt ended succeeded at step exit (detach)" [ "$(json 'd["state"]+"/"+d["end_reason"]' <<<"$task")" = succeeded/exit ]
check "shard:2 -> the slice is on the GPU Slurm counted the shards on (gpu_uuid in the attach)" \
  grep -q '^GPU-' <<<"$(json 'd["request"].get("gpu_uuid","")' <<<"$task")"
check "task $kt request carries external slurm job and user" \
  [ "$(json 'd["request"]["external"]["system"]+":"+d["request"]["external"]["user"]' <<<"$task")" = slurm:root ]
api n1 '/v1/audit?limit=1000' | grep -q "slurm job=$(json 'd["request"]["external"]["job"]' <<<"$task") step=0 user=root" \
  && ok "audit task.attach/task.end name the Slurm job" || bad "audit names the Slurm job"

# ---- explicit --gpu-mem wins over the shard rule; the tenant map picks the tenant
out=$(srun -w n1 -A physics --gres=shard:1 --gpu-mem=3G --gpu-compute=10 bash -c 'echo KT=$KERF_TASK_ID; exec '"$BUILD"'/bin/kerf-load probe --window-ms 100 --warmup-ms 0' 2>$B/e2)
tot=$(echo "$out" | grep '"result"' | json 'd["memory_total"]' 2>/dev/null)
check "--gpu-mem=3G -> cuMemGetInfo total $tot = 3 GiB" [ "$tot" = $((3 << 30)) ]
kt=$(echo "$out" | sed -n 's/^KT=\([0-9]*\).*/\1/p')
check "account physics -> tenant physics (tenant_map)" [ "$(api n1 /v1/tasks/$kt | json 'd["tenant"]')" = physics ]

# ---- bad option values fail the job with a message naming the option
srun -w n1 --gpu-mem=lots touch $B/bad1 2>$B/e3; rc=$?
check "--gpu-mem=lots refused (rc $rc), message names --gpu-mem, nothing ran" \
  eval '[ $rc -ne 0 ] && grep -q -- "--gpu-mem=lots: not valid" $B/e3 && [ ! -e $B/bad1 ]'
sbatch -w n1 --kerf-tier=urgent --wrap "touch $B/bad2" 2>$B/e4; rc=$?
check "sbatch --kerf-tier=urgent refused (rc $rc), message names --kerf-tier" \
  eval '[ $rc -ne 0 ] && grep -q -- "--kerf-tier=urgent: not valid" $B/e4'
srun -w n1 --gpu-compute=50 true 2>$B/e4b; rc=$?
check "--gpu-compute without a GPU gres fails the task (rc $rc) saying so" \
  eval '[ $rc -ne 0 ] && grep -q "need a GPU gres" $B/e4b'

# ---- a typed MIG gpu: the plugin maps Slurm's index to the instance's profile
out=$(srun -w n1 --gres=gpu:1g.18gb:1 printenv CUDA_VISIBLE_DEVICES KERF_UNIT_KIND KERF_TASK_ID 2>$B/e5m)
check "gpu:1g.18gb:1 -> a MIG instance by UUID ($(echo $out))" grep -q "^MIG-.* mig [0-9]*$" <<<"$(echo $out)"
# the instance Slurm counted (its index in gres.conf) is named to kerfd, which gives exactly it
mpin=$(api n1 /v1/tasks/$(echo $out | awk '{print $3}') | json 'd["request"].get("gpu_uuid","")')
check "gpu:1g.18gb:1 -> kerfd was told Slurm's instance and gave the task that one ($mpin)" \
  [ "$mpin" = "$(echo $out | awk '{print $1}')" ]
# ---- a whole GPU
out=$(srun -w n1 --gres=gpu:1 printenv CUDA_VISIBLE_DEVICES KERF_UNIT_KIND KERF_TASK_ID 2>$B/e5)
check "gpu:1 -> a whole GPU by UUID ($(echo $out))" grep -q "^GPU-.* whole [0-9]*$" <<<"$(echo $out)"
# the GPU Slurm chose (its index in gres.conf) is the one kerfd placed the task on
pin=$(api n1 /v1/tasks/$(echo $out | awk '{print $3}') | json 'd["request"].get("gpu_uuid","")')
check "gpu:1 -> kerfd was told Slurm's GPU and placed the task there ($pin)" \
  [ "$pin" = "$(echo $out | awk '{print $1}')" ]

# ---- -N2 spans nodes: each node's kerfd holds its task
out=$(srun -N2 --gres=gpu:1 bash -c 'echo $SLURMD_NODENAME $KERF_TASK_ID $KERF_UNIT_KIND' 2>$B/e6 | sort)
check "-N2: a task on n1 and on n2 ($(echo $out))" [ "$(echo "$out" | awk '{print $1 $3}' | tr -d '\n')" = n1wholen2whole ]
for n in n1 n2; do
  kt=$(echo "$out" | awk -v n=$n '$1 == n {print $2}')
  [ -n "$kt" ] && [ "$(api $n /v1/tasks/$kt | json 'd["state"]')" = succeeded ] && ok "-N2: $n kerfd task $kt succeeded" || bad "-N2: $n kerfd task"
done

# ---- two tasks on one GPU, the first task's attach refused (no such tenant): both fail, the
# second saying the first task's attach failed; nothing ran
srun -w n1 -n2 --gres=gpu:1 --kerf-tenant=nosuch bash -c 'touch '"$B"'/ran4.$SLURM_LOCALID' 2>$B/e8b; rc=$?
check "-n2, attach refused: both tasks fail (rc $rc), the first with kerfd's refusal, the other saying the first task's attach failed, nothing ran" \
  eval '[ $rc -ne 0 ] && grep -q "refused the attach.*no tenant" $B/e8b && grep -q "task [01] of job [0-9]* step 0 not run: the attach of the step.s first task on the same GPUs" $B/e8b && ! ls $B/ran4.* >/dev/null 2>&1'

# ---- workload route (cli_filter.lua): srun, sbatch and salloc alike
out=$(srun -w n1 --kerf-workload=inference --kerf-tier=high bash -c 'echo $SLURM_SHARDS_ON_NODE $KERF_UNIT_KIND' 2>$B/e7)
check "srun --kerf-workload=inference --kerf-tier=high -> shard:2 slice ($out)" [ "$out" = "2 slice" ]
J=$(sbatch --parsable -w n1 --kerf-workload=training -o $B/sb.out --wrap 'srun printenv KERF_UNIT_KIND')
for i in $(seq 100); do squeue -h -j $J 2>/dev/null | grep -q . || break; sleep 0.2; done
check "sbatch --kerf-workload=training -> whole ($(cat $B/sb.out))" grep -qx whole $B/sb.out
out=$(salloc -w n1 --kerf-workload=dev srun bash -c 'echo $SLURM_SHARDS_ON_NODE $KERF_UNIT_KIND' 2>$B/e8)
check "salloc --kerf-workload=dev -> shard:1 slice ($out)" [ "$out" = "1 slice" ]

# ---- scancel reclaims on every node
J=$(sbatch --parsable -N2 --gres=gpu:1 -o /dev/null --wrap 'srun sleep 120')
running() { api $1 '/v1/tasks?state=running' | python3 -c "import json,sys; print(sum(1 for t in json.load(sys.stdin)['items'] if t['request'].get('external',{}).get('job')==$2))"; }
for i in $(seq 100); do [ "$(running n1 $J)$(running n2 $J)" = 11 ] && break; sleep 0.2; done
check "scancel: job $J holds a kerf task on n1 and n2" [ "$(running n1 $J)$(running n2 $J)" = 11 ]
scancel $J
for i in $(seq 100); do [ "$(running n1 $J)$(running n2 $J)" = 00 ] && break; sleep 0.2; done
check "scancel: both tasks ended" [ "$(running n1 $J)$(running n2 $J)" = 00 ]
# units of job J's kerf tasks still held on node $1
held() {
  local ids; ids=$(api $1 '/v1/tasks?limit=1000' | python3 -c "import json,sys; print(' '.join(str(t['id']) for t in json.load(sys.stdin)['items'] if t['request'].get('external',{}).get('job')==$2))")
  api $1 /v1/units | python3 -c "import json,sys; ids=set(int(x) for x in sys.argv[1].split()); print(sum(1 for u in json.load(sys.stdin)['items'] if u.get('task') in ids))" "$ids"
}
check "scancel: no unit of job $J left on n1 or n2" [ "$(held n1 $J)$(held n2 $J)" = 00 ]
# units held by a task (a free MIG instance stays a unit, held by none)
units() { api $1 '/v1/units' | json 'sum(1 for u in d["items"] if u.get("task"))'; }

# ---- kerfd down on a node: the step fails clearly, nothing runs; fail_open=1 runs unenforced
kill $KPID_n1; for i in $(seq 50); do kill -0 $KPID_n1 2>/dev/null || break; sleep 0.1; done
srun -w n1 --gres=gpu:1 touch $B/ran1 2>$B/e9; rc=$?
check "kerfd down: srun fails (rc $rc)" [ $rc -ne 0 ]
check "kerfd down: message 'kerf: kerfd at $B/n1/kerfd.sock is not reachable'" grep -q "kerf: kerfd at $B/n1/kerfd.sock is not reachable" $B/e9
check "kerfd down: the task never ran" [ ! -e $B/ran1 ]
echo "$PLUG fail_open=1" > $B/etc/plugstack.conf
srun -w n1 --gres=gpu:1 touch $B/ran2 2>$B/e10; rc=$?
check "fail_open=1: runs (rc $rc) with a warning" grep -q "UNENFORCED" $B/e10
check "fail_open=1: the task ran" [ -e $B/ran2 ]
srun -w n1 -n2 --gres=gpu:1 bash -c 'touch '"$B"'/ran2.$SLURM_LOCALID' 2>$B/e10b; rc=$?
check "fail_open=1, two tasks on one GPU: the first cannot reach kerfd, both run (rc $rc) with the warning" \
  eval '[ $rc = 0 ] && [ "$(grep -c UNENFORCED $B/e10b)" = 2 ] && [ -e $B/ran2.0 ] && [ -e $B/ran2.1 ]'
start_kerfd n1
srun -w n1 --gres=shard:1 --gpu-mem=500G touch $B/ran3 2>$B/e11; rc=$?
check "fail_open=1 but kerfd refuses (never fits): fails (rc $rc), kerfd's reason shown, nothing ran" \
  eval '[ $rc -ne 0 ] && grep -q "refused the attach.*HTTP 422" $B/e11 && [ ! -e $B/ran3 ]'
echo "$PLUG" > $B/etc/plugstack.conf
check "n1 kerfd back: no unit held" [ "$(units n1)" = 0 ]

# ---- leases (lease_s=5) are renewed by slurmstepd: the time-limited step still runs
TLT=$(api n2 '/v1/tasks?limit=1000' | python3 -c "import json,sys; print([t['id'] for t in json.load(sys.stdin)['items'] if t['request'].get('external',{}).get('job')==$TL][0])")
check "lease renewal: n2 task $TLT of job $TL still running $(( $(date +%s) - T0 )) s in (lease 5 s)" [ "$(api n2 /v1/tasks/$TLT | json 'd["state"]')" = running ]

# ---- the time limit: Slurm ends the job; n2's kerfd has reclaimed its unit
for i in $(seq 500); do squeue -h -j $TL 2>/dev/null | grep -q . || break; sleep 0.2; done
st=$(scontrol show job $TL 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
check "time limit: job $TL ended $st" [ "$st" = TIMEOUT ]
for i in $(seq 50); do [ "$(running n2 $TL)" = 0 ] && break; sleep 0.2; done
check "time limit: n2 kerfd task ended" [ "$(running n2 $TL)" = 0 ]
check "time limit: its end is the plugin's detach ($(api n2 /v1/tasks/$TLT | json 'd["end_reason"]+": "+str(d["reason"]["text"])'))" \
  [ "$(api n2 /v1/tasks/$TLT | json 'd["end_reason"]')" = exit ]
check "n2: no unit held at the end" [ "$(units n2)" = 0 ]

# ---- a step on both of n2's whole GPUs: one kerf task, route whole, a unit on each GPU
N2GPUS=$(api n2 '/v1/gpus?limit=10' | json '" ".join(sorted(g["uuid"] for g in d["items"]))')
out=$(srun -w n2 --gres=gpu:2 bash -c 'echo $CUDA_VISIBLE_DEVICES $KERF_TASK_ID; curl -s --max-time 5 --unix-socket '"$B"'/n2/kerfd.sock http://x/v1/units' 2>$B/e12)
kt=$(head -1 <<<"$out" | awk '{print $2}')
cvd=$(head -1 <<<"$out" | awk '{print $1}' | tr , '\n' | sort | tr '\n' ' ' | sed 's/ $//')
check "gpu:2 -> CUDA_VISIBLE_DEVICES holds both n2 GPUs ($cvd)" [ -n "$kt" -a "$cvd" = "$N2GPUS" ]
got=$(tail -n +2 <<<"$out" | python3 -c "import json,sys; u=[x for x in json.load(sys.stdin)['items'] if x.get('task')==int(sys.argv[1])]; print(' '.join(sorted(x['kind']+':'+x['gpu_uuid'] for x in u)))" "${kt:-0}" 2>/dev/null)
check "gpu:2 -> kerf task $kt held a whole unit on each GPU while it ran ($got)" \
  [ "$got" = "$(for u in $N2GPUS; do printf 'whole:%s ' $u; done | sed 's/ $//')" ]
task=$(api n2 /v1/tasks/${kt:-0})
check "gpu:2 -> route whole, ended succeeded/exit at step end" \
  [ "$(json 'd["route"]+" "+d["state"]+"/"+d["end_reason"]' <<<"$task")" = "whole succeeded/exit" ]
check "gpu:2 -> no unit left on n2" [ "$(units n2)" = 0 ]

# ---- two tasks on n2's two whole GPUs: the first attaches, the second joins: ONE kerf task
# with both pids. Local task 0 asks kerfd for the pids once both are in; task 1 waits for it.
cat > $B/pids.sh <<EOT
#!/bin/bash
echo "T \$SLURM_LOCALID \$\$ \$KERF_TASK_ID \$CUDA_VISIBLE_DEVICES"
if [ "\$SLURM_LOCALID" = 0 ]; then
  for i in \$(seq 100); do
    p=\$(curl -s --max-time 5 --unix-socket $B/n2/kerfd.sock http://x/v1/tasks/\$KERF_TASK_ID | python3 -c 'import json,sys; print(" ".join(map(str, sorted(json.load(sys.stdin).get("pids") or []))))')
    [ "\$(wc -w <<<"\$p")" = 2 ] && break; sleep 0.1
  done
  echo "P \$p"; touch $B/pids.done
else
  for i in \$(seq 100); do [ -e $B/pids.done ] && break; sleep 0.1; done
fi
EOT
chmod 755 $B/pids.sh
out=$(srun -w n2 -N1 -n2 --gres=gpu:2 $B/pids.sh 2>$B/e13)
kts=$(awk '$1 == "T" {print $4}' <<<"$out" | sort -u | tr '\n' ' ' | sed 's/ $//')
cvds=$(awk '$1 == "T" {print $5}' <<<"$out" | tr , '\n' | sort | uniq -c | awk '{print $1}' | sort -u | tr -d '\n')
check "-n2 gpu:2 -> both tasks ran in ONE kerf task ($kts)" [ "$(awk '$1 == "T"' <<<"$out" | wc -l)" = 2 -a -n "$kts" -a "$kts" = "${kts%% *}" ]
check "-n2 gpu:2 -> both tasks see the same two GPUs" \
  [ "$cvds" = 2 -a "$(awk '$1 == "T" {print $5}' <<<"$out" | head -1 | tr , '\n' | sort | tr '\n' ' ' | sed 's/ $//')" = "$N2GPUS" ]
check "-n2 gpu:2 -> kerf task $kts lists both tasks' pids ($(awk '$1 == "P"' <<<"$out"))" \
  [ "$(awk '$1 == "P" {print $2, $3}' <<<"$out")" = "$(awk '$1 == "T" {print $3}' <<<"$out" | sort -n | tr '\n' ' ' | sed 's/ $//')" ]
task=$(api n2 /v1/tasks/${kts:-0})
check "-n2 gpu:2 -> ended $(json 'd["state"]+"/"+str(d["end_reason"])' <<<"$task") at step end, no unit left on n2" \
  [ "$(json 'd["state"]' <<<"$task")" = succeeded -a "$(units n2)" = 0 ]
api n2 '/v1/audit?limit=1000' | grep -q "\"task.join\"" && ok "-n2 gpu:2 -> audit task.join" || bad "-n2 gpu:2 -> audit task.join"

# ---- --gpu-bind: Slurm binds each task to one of the step's GPUs after the plugin's hook saw
# the step's list, so the tasks share one kerf task on both GPUs and each sees its own GPU
out=$(srun -w n2 -n2 --gres=gpu:2 --gpu-bind=map_gpu:0,1 bash -c 'echo $SLURM_LOCALID $CUDA_VISIBLE_DEVICES $KERF_TASK_ID' 2>$B/e15 | sort)
uuid_at() { api n2 '/v1/gpus?limit=10' | json "[g['uuid'] for g in d['items'] if g['index']==$1][0]"; }
check "--gpu-bind=map_gpu:0,1 -> task 0 sees only GPU 0, task 1 only GPU 1, one kerf task ($(echo $out))" \
  [ "$(awk '{print $1, $2}' <<<"$out" | tr '\n' ' ')" = "0 $(uuid_at 0) 1 $(uuid_at 1) " -a "$(awk '{print $3}' <<<"$out" | sort -u | wc -l)" = 1 ]
check "--gpu-bind -> no unit left on n2" [ "$(units n2)" = 0 ]

# ---- two tasks on n1's MIG instance: the same MIG- UUID, one kerf task
out=$(srun -w n1 -n2 --gres=gpu:1g.18gb:1 bash -c 'echo $CUDA_VISIBLE_DEVICES $KERF_TASK_ID $KERF_UNIT_KIND' 2>$B/e14)
same=$([ "$(wc -l <<<"$out")" = 2 ] && [ "$(sort -u <<<"$out" | wc -l)" = 1 ] && grep -q "^MIG-.* [0-9]* mig$" <<<"$out" && echo yes)
check "-n2 gpu:1g.18gb:1 -> both tasks on the same MIG instance, one kerf task ($(echo $out))" [ "$same" = yes ]
check "-n2 gpu:1g.18gb:1 -> no unit held on n1 after" [ "$(units n1)" = 0 ]

# ---- a join kerfd refuses (n2's store cannot record the member: 507): the task that joins
# fails with kerfd's message, the one that attached runs; nothing is left
touch $B/failjoin
srun -w n2 -n2 --gres=gpu:1 bash -c 'touch '"$B"'/ranj.$SLURM_LOCALID' 2>$B/e16; rc=$?
rm -f $B/failjoin
check "a refused join (HTTP 507): srun fails (rc $rc) with kerfd's message, only the attached task ran" \
  eval '[ $rc -ne 0 ] && grep -q "refused task [01] of job [0-9]* step [0-9]* a share of kerf task [0-9]*.*(HTTP 507)" $B/e16 && [ "$(ls $B/ranj.* 2>/dev/null | wc -l)" = 1 ]'
for i in $(seq 50); do [ "$(units n2)" = 0 ] && break; sleep 0.1; done
check "a refused join: no unit left on n2" [ "$(units n2)" = 0 ]

# ---- node failure (last: it takes n1's slurmd down): slurmd and the step's slurmstepd killed,
# nobody renews the 5 s lease; the task's process outlives its slurmstepd (SIGKILL reaches no
# child), so kerfd's pid check still sees it alive and the lease expiry is what ends it
NF=$(sbatch --parsable -w n1 --gres=gpu:1 -o /dev/null --wrap 'srun sleep 300')
for i in $(seq 100); do [ "$(running n1 $NF)" = 1 ] && break; sleep 0.2; done
NFT=$(api n1 '/v1/tasks?state=running' | python3 -c "import json,sys; print(([t['id'] for t in json.load(sys.stdin)['items'] if t['request'].get('external',{}).get('job')==$NF]+[0])[0])")
NFPID=$(api n1 /v1/tasks/$NFT | json 'd["pid"]' 2>/dev/null)
STEPD=$(pgrep -f "slurmstepd: \[$NF\.0\]")
check "node failure: job $NF step 0 runs as n1 kerf task $NFT (pid $NFPID, slurmstepd $STEPD)" [ "$NFT" != 0 -a -n "$STEPD" ]
kill -9 $SDPID_n1 $STEPD; K0=$(date +%s%N)
for i in $(seq 150); do [ "$(running n1 $NF)" = 0 ] && break; sleep 0.1; done
el=$(( ($(date +%s%N) - K0) / 1000000 ))
task=$(api n1 /v1/tasks/$NFT)
er=$(json 'd["state"]+"/"+str(d["end_reason"])' <<<"$task")
check "node failure: kerf task $NFT ended $er ${el} ms after the kill (lease 5 s)" \
  [ "$er" = failed/lease_expired -a $el -le 9000 ]
check "node failure: no unit of job $NF left on n1" [ "$(held n1 $NF)" = 0 ]
api n1 '/v1/audit?limit=1000' | python3 -c "import json,sys; sys.exit(0 if any(r['action']=='task.end' and str(sys.argv[1]) in str(r.get('object')) and 'lease' in str(r.get('reason')) for r in json.load(sys.stdin)['items']) else 1)" $NFT \
  && ok "node failure: audit task.end of task $NFT says the lease was not renewed" || bad "node failure: audit task.end names the lease"
kill -9 $NFPID 2>/dev/null
start_slurmd n1
scancel $NF
for i in $(seq 100); do squeue -h -j $NF 2>/dev/null | grep -q . || break; sleep 0.2; done
check "node failure: slurmd n1 back, job $NF gone" eval '! squeue -h -j $NF 2>/dev/null | grep -q .'

echo "slurm test: $FAILS failure(s) in $(( $(date +%s) - T0 )) s"
[ $FAILS = 0 ]
