#!/usr/bin/env bash
# The files `retarget sweep --manifest` writes, run by the tools they are written for: a real
# single-node Slurm cluster (munged, slurmctld and slurmd started here, configured in a temporary
# directory, stopped at the end) runs the job array, GNU parallel runs the command file, and
# `retarget sweep-merge` of each set of parts must equal, byte for byte, the CSV that
# `retarget sweep -j 2` writes for the same sweep.
#   tests/sweep/cluster_test.sh RETARGET MODULE
# Exit 0: both matched; 1: a mismatch or a failure (daemon logs printed); 77 (ctest's skip):
# Slurm, munge or GNU parallel is not installed (scripts/install-deps.sh installs them).
# Nothing outside the temporary directory is touched: the daemons listen on free ports of
# 127.0.0.1 and run as the calling user; a cluster already running on the machine is not seen.
set -euo pipefail

if [[ $# -ne 2 || "$1" == "--help" || "$1" == "-h" ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  [[ "${1:-}" == "--help" || "${1:-}" == "-h" ]] && exit 0 || exit 2
fi
retarget="$(realpath "$1")"
module="$(realpath "$2")"
sweep_axes=(--set dram_gbps=10,40 --set clock_mhz=700,940)

for tool in munged munge slurmctld slurmd sbatch scontrol sinfo parallel; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIPPED: '$tool' is not installed; scripts/install-deps.sh installs slurmctld," \
      "slurmd, slurm-client, munge and parallel" >&2
    exit 77
  fi
done

# munged insists that every directory above its socket is searchable by all, and a socket path
# must stay under 108 bytes: the cluster lives in a short directory of /tmp.
work="$(mktemp -d /tmp/retarget-cluster.XXXXXX)"
chmod 755 "$work"
mkdir -m 700 "$work/private" "$work/state" "$work/spool"
user="$(id -un)"
export SLURM_CONF="$work/slurm.conf"

daemon_logs() {
  for log in private/munged.log slurmctld.log slurmd.log; do
    [[ -f "$work/$log" ]] || continue
    echo "---- last lines of $log" >&2
    tail -n 20 "$work/$log" >&2
  done
}
# Stops the daemons and waits until they are gone (10 s each, then SIGKILL), so the test never
# leaves a cluster behind.
stop_cluster() {
  local status=$?
  local pids=()
  for pidfile in slurmd.pid slurmctld.pid munged.pid; do
    if [[ -f "$work/$pidfile" ]]; then pids+=("$(cat "$work/$pidfile")"); fi
  done
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do
      # Gone, or a zombie waiting for a parent that does not reap (a container's init).
      [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" == [^Z]* ]] || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  if ((status == 0)); then
    rm -rf "$work"
  else
    daemon_logs
    echo "cluster directory kept for inspection: $work" >&2
  fi
}
trap stop_cluster EXIT
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# A port nobody listens on (bash's /dev/tcp connects when one does).
free_port() {
  local port=$1
  while (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}
ctld_port="$(free_port $((20000 + $$ % 20000)))"
slurmd_port="$(free_port $((ctld_port + 1)))"

head -c 1024 /dev/urandom >"$work/private/munge.key"
chmod 600 "$work/private/munge.key"
munged --key-file="$work/private/munge.key" --socket="$work/munge.sock" \
  --pid-file="$work/munged.pid" --log-file="$work/private/munged.log" \
  --seed-file="$work/private/munged.seed" || fail "munged did not start"

node="$(hostname -s)"
cat >"$SLURM_CONF" <<EOF
ClusterName=retarget-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=retarget Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 60); do
  if [[ "$(sinfo --noheader --format=%t 2>/dev/null)" == "idle" ]]; then break; fi
  sleep 0.5
done
[[ "$(sinfo --noheader --format=%t)" == "idle" ]] || fail "the node did not become idle"
echo "cluster: slurmctld on 127.0.0.1:$ctld_port, slurmd on :$slurmd_port, node $node" >&2

cd "$work"
"$retarget" sweep "$module" "${sweep_axes[@]}" -j 2 --csv direct.csv >/dev/null ||
  fail "retarget sweep -j 2"
points=$(($(wc -l <direct.csv) - 1))
((points == 4)) || fail "expected 4 points in direct.csv, got $points"

# Slurm: the job array, waited for; every task's log must exist (Slurm wrote it) and the merge
# of the parts must be the sweep's own table.
"$retarget" sweep "$module" "${sweep_axes[@]}" --manifest slurm >/dev/null
timeout 300 sbatch --wait --quiet slurm/sweep.sbatch || fail "sbatch --wait: the array failed"
for k in $(seq 0 $((points - 1))); do
  [[ -f "slurm/logs/point-$k.log" ]] || fail "Slurm wrote no log for task $k"
done
"$retarget" sweep-merge slurm/parts/point-*.csv --csv slurm.csv >/dev/null
cmp direct.csv slurm.csv || fail "the merged Slurm parts differ from the -j 2 sweep"
echo "slurm: $points array tasks merged into the -j 2 table" >&2

# GNU parallel: the command file as written, two at a time.
"$retarget" sweep "$module" "${sweep_axes[@]}" --manifest parallel >/dev/null
timeout 300 parallel --will-cite -j 2 <parallel/commands.txt >/dev/null ||
  fail "parallel: a command failed"
"$retarget" sweep-merge parallel/parts/point-*.csv --csv parallel.csv >/dev/null
cmp direct.csv parallel.csv || fail "the merged GNU parallel parts differ from the -j 2 sweep"
echo "parallel: $points commands merged into the -j 2 table" >&2
