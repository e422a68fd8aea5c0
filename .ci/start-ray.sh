#!/usr/bin/env bash
# A small one-node Ray cluster on this machine for the Ray backend's tests: installs ray[default] (the dashboard
# serves the Jobs HTTP API), starts a head bound to 127.0.0.1 with 2 CPUs and a 200 MB object store, and waits
# until the Jobs API answers. Idempotent: a head that already answers is left as it is.
set -euo pipefail
log() { printf '== start-ray: %s\n' "$*"; }
die() { printf '== start-ray: FAILED: %s\n' "$*" >&2; exit 1; }

RAY_VERSION=2.60.0
GCS_PORT=${RAY_GCS_PORT:-6380}
DASHBOARD_PORT=${RAY_DASHBOARD_PORT:-8265}
API="http://127.0.0.1:$DASHBOARD_PORT"
WAIT_S=${RAY_START_WAIT_S:-120}
t0=$(date +%s)

# The Jobs API's version reply (python3, not curl: it is here whenever Ray is), or a non-zero exit.
version() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "/api/version", timeout=5).read().decode())' "$API" 2>/dev/null; }
answers() { version >/dev/null; }

if answers; then
  log "a Ray head already answers at $API ($(version))"
  exit 0
fi

if python3 -c "import ray, ray.dashboard, aiohttp; assert ray.__version__ == '$RAY_VERSION'" 2>/dev/null; then
  log "ray[default]==$RAY_VERSION already installed"
else
  log "pip install ray[default]==$RAY_VERSION"
  python3 -m pip install --quiet --disable-pip-version-check "ray[default]==$RAY_VERSION" || die "pip install ray[default]==$RAY_VERSION failed"
  log "installed in $(( $(date +%s) - t0 )) s"
fi
RAY="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/ray"
[ -x "$RAY" ] || RAY="$(command -v ray)" || die "the ray command is not on PATH after installing"

log "ray start --head on 127.0.0.1 (GCS port $GCS_PORT, Jobs API $API)"
t1=$(date +%s)
# No usage stats (nothing outside this machine is reached); a small object store: the trainers pass no objects.
# RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0: a single-node cluster; without it Ray swaps 127.0.0.1 for the eth0 address.
RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_USAGE_STATS_ENABLED=0 "$RAY" start --head --node-ip-address 127.0.0.1 --port "$GCS_PORT" \
  --dashboard-host 127.0.0.1 --dashboard-port "$DASHBOARD_PORT" --include-dashboard true \
  --num-cpus 2 --num-gpus 0 --object-store-memory 200000000 --disable-usage-stats >/tmp/ray-start.log 2>&1 \
  || { cat /tmp/ray-start.log >&2; die "ray start --head failed (log above; see /tmp/ray/session_latest/logs/)"; }

deadline=$(( $(date +%s) + WAIT_S ))
until answers; do
  [ "$(date +%s)" -lt "$deadline" ] || die "the Jobs API at $API does not answer ${WAIT_S} s after ray start (see /tmp/ray/session_latest/logs/dashboard.log)"
  sleep 0.5
done
log "ready: Jobs API at $API answers ($(version)); head started in $(( $(date +%s) - t1 )) s, $(( $(date +%s) - t0 )) s in all"
