#!/usr/bin/env bash
# The Hugging Face trainer's environment (trainers/hf/requirements.txt, pinned) in a venv of its own under
# FLYWHEEL_HOME, never the system Python: stack/hf-env.ts installs it the same way and checks the same marker.
# Idempotent: a venv whose marker matches the requirements' hash is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${FLYWHEEL_HOME:-$PWD/.flywheel}"
venv="$home/hf-venv"
marker="$venv/flywheel-hf-requirements.sha256"
want=$(sha256sum trainers/hf/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$marker" 2>/dev/null)" = "$want" ]; then
  echo "hf-venv: $venv holds trainers/hf/requirements.txt already"
  exit 0
fi
[ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r trainers/hf/requirements.txt 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
echo "$want" > "$marker"
"$venv/bin/python3" -c 'import torch, transformers, trl, peft; print(f"hf-venv: torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}, peft {peft.__version__}")'
