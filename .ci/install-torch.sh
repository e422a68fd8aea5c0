#!/usr/bin/env bash
# The reference PyTorch trainer's one dependency, pinned (a CPU build on CI), with numpy, without which torch warns
# on stderr at import (the trainer's tests want a clean stderr). Idempotent: pip leaves installed pins alone. The same
# pins as test/setup/install-test-tools.ts, which `npm test` uses to install them into .flywheel/venv instead.
set -euo pipefail
python3 -m pip install --quiet --disable-pip-version-check torch==2.13.0 numpy==2.4.6
python3 -c 'import torch; print(f"torch {torch.__version__}")'
