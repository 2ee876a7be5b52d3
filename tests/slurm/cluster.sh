#!/usr/bin/env bash
# A single-node SLURM cluster with accounting on 127.0.0.1, for tests/cluster/test_slurm.py.
#
#   bash tests/slurm/cluster.sh up      install (apt-get) if needed, configure, start; idempotent
#   bash tests/slurm/cluster.sh down    stop the daemons this script started
#   bash tests/slurm/cluster.sh status  exit 0 when jobs can be submitted and accounted
#
# Needs root and apt-get (Debian 12: slurm-wlm 22.05, munge, slurmdbd, mariadb-server).
# Exit status 3 with a line "cannot host SLURM: <reason>" on stderr means this machine cannot
# host the cluster (the test is then skipped with that reason); any other failure is an error.
# No systemd: munged, mariadbd (--skip-networking), slurmdbd, slurmctld and slurmd are started
# directly and every daemon listens on loopback only. Two fake GPUs (gres without device
# files) let jobs that request GPUs be scheduled, so the profile's GPU requests are exercised.
set -euo pipefail

CLUSTER=userfair
ACCOUNT=userfair
PARTITION=debug
GPU_PARTITION=gpu # the same node again, for the profile's routing of GPU jobs
MARKER="# written by userfair tests/slurm/cluster.sh"
STATE=/var/lib/userfair-slurm # logs, spool and state of this cluster
# The munged this script starts writes its pid here, so that `down` stops it and only it (a
# munged that was running before is left alone).
MUNGED_PID=/run/munge/userfair-munged.pid
CONF=/etc/slurm
DB_SOCKET=/run/mysqld/mysqld.sock
DB_PASSWORD=userfair-slurmdbd # loopback-only, throw-away test database

log() { echo "[slurm-cluster] $*" >&2; }
cannot_host() {
    echo "cannot host SLURM: $*" >&2
    exit 3
}
wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
    local seconds=$1 what=$2
    shift 2
    for _ in $(seq $((seconds * 4))); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.25
    done
    log "timed out after ${seconds}s waiting for $what"
    tail -n 8 "$STATE"/log/slurm*.log >&2 2>/dev/null || true
    return 1
}

check_host() {
    [ "$(id -u)" = 0 ] || cannot_host "needs root to install and start the daemons (uid $(id -u))"
    command -v apt-get >/dev/null || cannot_host "no apt-get (the set-up installs Debian packages)"
    if [ -e "$CONF/slurm.conf" ] && ! grep -qF "$MARKER" "$CONF/slurm.conf"; then
        cannot_host "$CONF/slurm.conf belongs to another SLURM installation; not overwriting it"
    fi
}

install_packages() {
    local missing=()
    for pkg in slurm-wlm slurmdbd munge mariadb-server; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} = 0 ] && return 0
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >"$STATE/log/apt.log" 2>&1 || {
        tail "$STATE/log/apt.log" >&2
        cannot_host "apt-get update failed"
    }
    apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$STATE/log/apt.log" 2>&1 ||
        {
            tail "$STATE/log/apt.log" >&2
            cannot_host "apt-get install ${missing[*]} failed"
        }
}

write_configs() {
    local host cpus mem
    host=$(hostname -s)
    # The cores this machine offers (its CPU affinity). nproc also obeys OMP_NUM_THREADS,
    # which a parallel test run sets to 1 in each worker (tests/conftest.py): a node of one
    # CPU would leave every job of more threads pending for ever.
    cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
    # RealMemory must not exceed what slurmd detects; keep 512 MB for the daemons.
    mem=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
    mem=$((mem > 1024 ? mem - 512 : mem))
    mkdir -p "$CONF" "$STATE"/{ctld,slurmd}
    cat >"$CONF/slurm.conf" <<EOF
$MARKER
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
# Every daemon on loopback only.
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
# No cgroups in containers: track processes through /proc.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Without a default a job without --mem takes the whole node, and jobs run one at a time.
DefMemPerCPU=1000
# Finished jobs stay visible to squeue for 5 minutes (sacct keeps them for ever).
MinJobAge=300
ReturnToService=2
SchedulerType=sched/backfill
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:2 State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=$GPU_PARTITION Nodes=ALL Default=NO MaxTime=INFINITE State=UP
EOF
    # Two fake GPUs (copies of /dev/null): enough for the scheduler, nothing for CUDA.
    for i in 0 1; do
        if [ ! -c "$STATE/fake-gpu$i" ]; then
            rm -f "$STATE/fake-gpu$i"
            mknod "$STATE/fake-gpu$i" c 1 3
        fi
    done
    echo "NodeName=$host Name=gpu File=$STATE/fake-gpu[0-1]" >"$CONF/gres.conf"
    cat >"$CONF/slurmdbd.conf" <<EOF
$MARKER
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
CommunicationParameters=NoInAddrAny
SlurmUser=root
PidFile=$STATE/slurmdbd.pid
LogFile=$STATE/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=$DB_PASSWORD
EOF
    chmod 600 "$CONF/slurmdbd.conf"
}

start_munge() {
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    log "starting munged"
    [ -s /etc/munge/munge.key ] || mungekey --create --force
    mkdir -p /run/munge && chown munge:munge /run/munge
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    runuser -u munge -- /usr/sbin/munged --force --pid-file="$MUNGED_PID"
    wait_for 10 munged sh -c 'munge -n | unmunge'
}

start_mariadb() {
    if ! mariadb-admin --socket="$DB_SOCKET" ping >/dev/null 2>&1; then
        log "starting mariadbd (no networking)"
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
        setsid /usr/sbin/mariadbd --user=mysql --skip-networking --socket="$DB_SOCKET" \
            >"$STATE/log/mariadbd.log" 2>&1 </dev/null &
        wait_for 30 mariadbd mariadb-admin --socket="$DB_SOCKET" ping
    fi
    mariadb --socket="$DB_SOCKET" <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF
}

start_daemon() { # start_daemon NAME READY-CHECK...
    local name=$1
    shift
    if pgrep -x "$name" >/dev/null; then return 0; fi
    log "starting $name"
    case $name in
        slurmdbd) /usr/sbin/slurmdbd ;;
        slurmctld) /usr/sbin/slurmctld ;;
        slurmd) /usr/sbin/slurmd ;;
    esac
    wait_for 30 "$name" "$@"
}

add_associations() {
    sacctmgr -i show cluster -n format=cluster | grep -qw "$CLUSTER" ||
        sacctmgr -i add cluster "$CLUSTER" >/dev/null
    sacctmgr -i show account -n format=account | grep -qw "$ACCOUNT" ||
        sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description=tests organization=userfair >/dev/null
    root_has_account ||
        sacctmgr -i add user root account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
}

root_has_account() { sacctmgr -n -P show assoc user=root format=account | grep -qx "$ACCOUNT"; }
node_registered() { sinfo -h -N -o '%T' | grep -qvE '^(unknown|down)'; }
node_ready() { sinfo -h -N -o '%T' | grep -qE '^(idle|mixed|allocated)'; }

is_up() {
    pgrep -x slurmctld >/dev/null && pgrep -x slurmd >/dev/null && pgrep -x slurmdbd >/dev/null &&
        node_ready && root_has_account
}

up() {
    check_host
    mkdir -p "$STATE/log"
    if is_up; then
        local before
        before=$(cat "$CONF"/{slurm,gres,slurmdbd}.conf | sha256sum)
        write_configs
        if [ "$(cat "$CONF"/{slurm,gres,slurmdbd}.conf | sha256sum)" = "$before" ]; then
            log "already up (cluster $CLUSTER, account $ACCOUNT, partitions $PARTITION $GPU_PARTITION)"
            return 0
        fi
        log "configuration changed: restarting"
        down
        sleep 1
    fi
    install_packages
    write_configs
    start_munge
    start_mariadb
    start_daemon slurmdbd sacctmgr -n show cluster
    add_associations
    start_daemon slurmctld scontrol ping
    start_daemon slurmd node_registered
    # A node left drained or down by an earlier run comes back here.
    node_ready || scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
    wait_for 30 "node $(hostname -s) idle" node_ready
    is_up || {
        log "daemons started but the cluster is not usable"
        exit 1
    }
    log "up: cluster $CLUSTER, account $ACCOUNT, partitions $PARTITION $GPU_PARTITION, $(sinfo -h -N -o '%N %c CPUs %m MB %G' | head -1)"
}

stop_pidfile() { # stop_pidfile NAME PIDFILE
    local pid
    pid=$(cat "$2" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null && log "stopped $1 ($pid)" || true
    rm -f "$2"
}

down() {
    stop_pidfile slurmd "$STATE/slurmd.pid"
    stop_pidfile slurmctld "$STATE/slurmctld.pid"
    stop_pidfile slurmdbd "$STATE/slurmdbd.pid"
    mariadb-admin --socket="$DB_SOCKET" shutdown 2>/dev/null && log "stopped mariadbd" || true
    stop_pidfile munged "$MUNGED_PID"
    # With slurm.conf in place and no controller, every SLURM command waits about 9 s for
    # one before it fails; so does every `snakemake` on this machine, local runs included:
    # snakemake-executor-plugin-slurm runs `scontrol show config` when it is loaded. Without
    # the file scontrol fails at once. `up` writes it again.
    rm -f "$CONF/slurm.conf"
}

case ${1:-} in
    up) up ;;
    down) down ;;
    status) is_up ;;
    *)
        echo "usage: $0 up|down|status" >&2
        exit 2
        ;;
esac
