#!/usr/bin/env bash
# The Hugging Face trainer's environment (trainers/hf/requirements.txt, pinned) in a venv of its own under
# FLYWHEEL_HOME, never the system Python: stack/hf-env.ts installs it the same way and checks the same marker.
# Idempotent: a venv whose marker matches the requirements' hash is left as it is. Then the base model flywheel-base
# (trainers/hf/pretrain_base.py, as `flywheel setup hf` builds it): cached under FLYWHEEL_HOME/models, rebuilt only
# when the script, its seed or the corpus (the venv interpreter's standard library) changes.
set -euo pipefail
cd "$(dirname "$0")/.."
home="${FLYWHEEL_HOME:-$PWD/.flywheel}"
venv="$home/hf-venv"
marker="$venv/flywheel-hf-requirements.sha256"
want=$(sha256sum trainers/hf/requirements.txt | cut -d' ' -f1)
if [ "$(cat "$marker" 2>/dev/null)" = "$want" ]; then
  echo "hf-venv: $venv holds trainers/hf/requirements.txt already"
else
  [ -x "$venv/bin/python3" ] || python3 -m venv "$venv"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check -r trainers/hf/requirements.txt 2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }
  echo "$want" > "$marker"
  "$venv/bin/python3" -c 'import torch, transformers, trl, peft; print(f"hf-venv: torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}, peft {peft.__version__}")'
fi
"$venv/bin/python3" trainers/hf/pretrain_base.py --models "$home/models" --quiet \
  | "$venv/bin/python3" -c 'import json, sys; b = json.loads(sys.stdin.read().strip().splitlines()[-1]); print("flywheel-base: %s (%s), %d parameters, %d steps in %s s, held-out loss %s nats/token" % (b["folder"], "cached" if b["cached"] else "built", b["params"], b["steps"], b["seconds"], b["heldoutLoss"]))'
