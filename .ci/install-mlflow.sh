#!/usr/bin/env bash
# MLflow's tracking server, for the `flywheel export mlflow` test (test/cli/export-mlflow.test.ts starts it on
# 127.0.0.1 with a sqlite store): a venv of its own under FLYWHEEL_HOME, never the system Python, pinned.
# Flywheel itself talks to MLflow over its REST API and needs no Python package at run time.
# Idempotent: a venv whose marker names the pinned version is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
version=3.17.2
home="${FLYWHEEL_HOME:-$PWD/.flywheel}"
venv="$home/mlflow-venv"
marker="$venv/flywheel-mlflow-version"
if [ "$(cat "$marker" 2>/dev/null)" = "$version" ]; then
  echo "mlflow-venv: $venv holds mlflow $version already"
  exit 0
fi
[ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "mlflow==$version" 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
echo "$version" > "$marker"
"$venv/bin/mlflow" --version
