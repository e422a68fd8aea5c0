#!/usr/bin/env bash
# The reference PyTorch trainer's one dependency, pinned (a CPU build on CI). Idempotent: pip leaves an
# installed torch==2.13.0 alone.
set -euo pipefail
python3 -m pip install --quiet --disable-pip-version-check torch==2.13.0
python3 -c 'import torch; print(f"torch {torch.__version__}")'
