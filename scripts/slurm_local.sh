#!/usr/bin/env bash
# Start or stop a real single-node Slurm (munge + slurmctld + slurmd) on this machine,
# for the sweep tests and for trying `aggnet sweep --slurm` locally.
#
#   scripts/slurm_local.sh start   # installs slurm-wlm and munge if missing (needs root),
#                                  # writes a slurm.conf under $AGGNET_SLURM_DIR, starts the
#                                  # daemons and waits until the node is idle
#   scripts/slurm_local.sh stop    # stops the daemons it started (by their pid files)
#   scripts/slurm_local.sh env     # prints `export SLURM_CONF=...` for a shell to eval
#
# State, logs, pid files and slurm.conf live in $AGGNET_SLURM_DIR (default
# /tmp/aggnet-slurm); SLURM_CONF points the Slurm commands there, so /etc/slurm is not
# touched. munge keeps its key in /etc/munge/munge.key (created if missing, mode 400).
set -euo pipefail

DIR=${AGGNET_SLURM_DIR:-/tmp/aggnet-slurm}
CONF="$DIR/slurm.conf"
export SLURM_CONF="$CONF"

log() { echo "slurm_local: $*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

install_packages() {
  local missing=()
  command -v slurmctld >/dev/null 2>&1 || missing+=(slurm-wlm)
  command -v munged >/dev/null 2>&1 || missing+=(munge)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq </dev/null >/dev/null
    as_root apt-get install -y -qq --no-install-recommends slurm-wlm munge </dev/null >/dev/null
  fi
}

munge_ok() { munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
  if munge_ok; then return 0; fi
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    as_root mkdir -p /etc/munge
    as_root dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  if id munge >/dev/null 2>&1; then
    as_root chown munge:munge /etc/munge/munge.key
    as_root mkdir -p /run/munge /var/log/munge /var/lib/munge
    as_root chown munge:munge /run/munge /var/log/munge /var/lib/munge
    as_root chmod 400 /etc/munge/munge.key
    as_root runuser -u munge -- munged --force
  else
    as_root chmod 400 /etc/munge/munge.key
    as_root mkdir -p /run/munge
    as_root munged --force
  fi
  touch "$DIR/munged.started-by-us"
  for _ in $(seq 50); do munge_ok && return 0; sleep 0.1; done
  log "munged did not come up"; return 1
}

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
  mkdir -p "$DIR/state" "$DIR/spool"
  cat >"$CONF" <<CONF
ClusterName=aggnet
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  install_packages
  mkdir -p "$DIR"
  start_munge
  if ! alive "$DIR/slurmctld.pid"; then
    write_conf
    as_root env SLURM_CONF="$CONF" slurmctld -i
  fi
  if ! alive "$DIR/slurmd.pid"; then
    as_root env SLURM_CONF="$CONF" slurmd
  fi
  local host state
  host=$(hostname -s)
  for _ in $(seq 120); do
    state=$(sinfo -h -n "$host" -o '%T' 2>/dev/null | head -n1 || true)
    case "$state" in
      idle*|mixed*|allocated*) log "node $host is $state (SLURM_CONF=$CONF)"; return 0 ;;
      down*|drain*) scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1 || true ;;
    esac
    sleep 0.5
  done
  log "node did not become idle; see $DIR/slurmctld.log and $DIR/slurmd.log"
  sinfo >&2 || true
  return 1
}

stop() {
  local f pid
  for f in "$DIR/slurmd.pid" "$DIR/slurmctld.pid"; do
    if alive "$f"; then
      pid=$(cat "$f")
      as_root kill "$pid" || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  done
  # munged only if this script started it (it may serve other users of the machine).
  if [ -f "$DIR/munged.started-by-us" ] && alive /run/munge/munged.pid; then
    as_root kill "$(cat /run/munge/munged.pid)" || true
  fi
  rm -f "$DIR/munged.started-by-us"
  log "stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
