#!/usr/bin/env bash
# A one-node Slurm cluster on this machine for the Slurm backend's tests: installs slurm-wlm (Debian), writes a
# munge key and a slurm.conf for localhost, starts munged, slurmctld and slurmd as plain daemons (no systemd), and
# waits until the node takes jobs. Idempotent: a second run changes nothing that already works. Runs as root.
set -euo pipefail
log() { printf '== start-slurm: %s\n' "$*"; }
die() { printf '== start-slurm: FAILED: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root (installs packages and starts daemons)"

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
LOG_DIR=/var/log/slurm
CTLD_STATE=/var/spool/slurmctld
SLURMD_SPOOL=/var/spool/slurmd
WAIT_S=${SLURM_START_WAIT_S:-60}

# --- packages -------------------------------------------------------------------------------------------------
if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && command -v munged >/dev/null; then
  log "slurm-wlm already installed ($(dpkg-query -W -f '${Version}' slurm-wlm 2>/dev/null || echo "version unknown"))"
else
  # apt-get update only when the package lists do not know slurm-wlm yet (a fresh image has none).
  if ! apt-cache show slurm-wlm >/dev/null 2>&1; then
    log "apt-get update"
    apt-get update -q >/dev/null || die "apt-get update failed"
  fi
  log "apt-get install slurm-wlm"
  t0=$(date +%s)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends slurm-wlm munge >/dev/null \
    || die "apt-get install -y slurm-wlm failed"
  log "installed slurm-wlm $(dpkg-query -W -f '${Version}' slurm-wlm) in $(( $(date +%s) - t0 )) s"
fi

# --- munge ----------------------------------------------------------------------------------------------------
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  log "creating /etc/munge/munge.key"
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  log "munged already running"
else
  log "starting munged"
  runuser -u munge -- /usr/sbin/munged || die "munged did not start (see /var/log/munge/munged.log)"
  for _ in $(seq 1 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null | unmunge >/dev/null || die "munge round trip fails (see /var/log/munge/munged.log)"
fi

# --- slurm.conf -----------------------------------------------------------------------------------------------
NODE=$(hostname -s)
CPUS=$(nproc)
# 95% of MemTotal, so slurmd's own reading (a little below MemTotal) never finds less than configured.
MEM_MB=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.95 }' /proc/meminfo)
install -d -m 0755 "$CONF_DIR" "$LOG_DIR" "$CTLD_STATE" "$SLURMD_SPOOL"
tmp=$(mktemp)
cat >"$tmp" <<EOF
# Written by .ci/start-slurm.sh: a one-node cluster on this machine for Flywheel's Slurm backend tests.
ClusterName=flywheel
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
# A requeued job may start again only once its old credential has expired (default 120 s): 20 s keeps the
# preemption/requeue test short and is still ample for a launch on one idle node.
AuthInfo=cred_expire=20
CredType=cred/munge
MpiDefault=none
# No cgroups in a container: track job processes by parentage, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
# Pending jobs are tried every second (default 60 s): a requeued job, or the next experiment submitted while the
# previous one is still completing, starts within about a second (bench/idle-gap.ts: 3.1 s median gap at 5 s, 1.0 s at 1 s).
SchedulerParameters=bf_interval=1,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
# Preempted and node-failed batch jobs go back to the queue; the trainer resumes from its newest checkpoint.
JobRequeue=1
ReturnToService=2
# Finished jobs stay visible to scontrol/squeue for an hour (there is no accounting database to ask).
MinJobAge=3600
# Short timeouts so a dead slurmd or a cancelled job is noticed in seconds, not minutes.
SlurmdTimeout=30
SlurmctldTimeout=30
InactiveLimit=0
KillWait=5
OverTimeLimit=0
MessageTimeout=10
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
StateSaveLocation=$CTLD_STATE
SlurmdSpoolDir=$SLURMD_SPOOL
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
restart=0
if [ -f "$CONF" ] && cmp -s "$tmp" "$CONF"; then
  rm -f "$tmp"
  log "$CONF unchanged (node $NODE, $CPUS CPUs, ${MEM_MB} MB)"
else
  install -m 0644 "$tmp" "$CONF"
  rm -f "$tmp"
  restart=1
  log "wrote $CONF (node $NODE, $CPUS CPUs, ${MEM_MB} MB)"
fi

# --- daemons --------------------------------------------------------------------------------------------------
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
stop() {
  local pidfile=$1 pid
  running "$pidfile" || return 0
  pid=$(cat "$pidfile")
  kill "$pid"
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "$2 (pid $pid) did not stop"
}
if [ "$restart" -eq 1 ]; then
  stop /run/slurmd.pid slurmd
  stop /run/slurmctld.pid slurmctld
fi
if running /run/slurmctld.pid; then
  log "slurmctld already running (pid $(cat /run/slurmctld.pid))"
else
  log "starting slurmctld"
  /usr/sbin/slurmctld || die "slurmctld did not start (see $LOG_DIR/slurmctld.log)"
fi
if running /run/slurmd.pid; then
  log "slurmd already running (pid $(cat /run/slurmd.pid))"
else
  log "starting slurmd"
  /usr/sbin/slurmd || die "slurmd did not start (see $LOG_DIR/slurmd.log)"
fi

# --- wait for the node ----------------------------------------------------------------------------------------
deadline=$(( $(date +%s) + WAIT_S ))
state=""
while :; do
  state=$(sinfo -h -n "$NODE" -o %t 2>/dev/null | head -n1 || true)
  case "$state" in
    idle | mix | alloc | comp) break ;;
    down* | drain* | drng*)
      # A node left down by an earlier slurmd (state is saved across restarts): it is back, so resume it.
      scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true ;;
  esac
  [ "$(date +%s)" -lt "$deadline" ] || die "node $NODE is not up after ${WAIT_S} s (sinfo state: '${state:-no answer}'; see $LOG_DIR/)"
  sleep 0.5
done
log "ready: node $NODE is $state; partition $(sinfo -h -o %P | head -n1)"
