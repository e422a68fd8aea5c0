#!/usr/bin/env bash
# The trainer sandbox: bubblewrap from Debian (mount, pid and network namespaces for `train`, `predict` and the
# graders), slirp4netns and iproute2 for a networked trainer's egress-only namespace (trainer.network: true), and
# util-linux's setpriv, prlimit and unshare (Essential on Debian). Idempotent; needs root (apt-get).
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bwrap --version
slirp4netns --version | head -n 1
