#!/usr/bin/env bash
# Debian's Chromium for the dashboard's browser tests (test/dashboard), driven by the npm package playwright-core.
# Idempotent: does nothing when the binary is already there.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then chromium --version; exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
