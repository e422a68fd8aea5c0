#!/usr/bin/env bash
# The trainer sandbox: bubblewrap from Debian (user, mount, pid and network namespaces for `train` and `predict`).
# Idempotent; needs root (apt-get).
set -euo pipefail
if ! command -v bwrap >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
fi
bwrap --version
