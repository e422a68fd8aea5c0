#!/usr/bin/env bash
# The GPU check of the Hugging Face trainer (issues 18 and 34), under 5 minutes and with no network: on an NVIDIA GPU, a
# ~0.5B-parameter Llama built here from a config (30 layers, width 1024, 16 heads, vocabulary 8192, tied embeddings:
# trainers/hf/tiny_model.py, random weights, a tokenizer trained on the synthetic text; nothing from a hub) trains in
# bf16 on synthetic examples through the HF trainer (trainers/hf/main.py train, as a campaign runs it) and through a
# bare TRL script of the same config (bench/hf-bare-trl.py), one after the other on the same device; it prints each
# one's steady tokens/s and MFU (6N FLOPs per token over the card's dense bf16 peak, the trainers' table in
# trainers/torch/throughput.py, or FLYWHEEL_PEAK_FLOPS), each one's whole-run wall time (process start to exit, the
# weights written) and the ratio.
#   bash bench/gpu-check.sh            on a GPU host; FLYWHEEL_HF_PYTHON names a Python whose torch has CUDA
#   bash bench/gpu-check.sh --tiny     the same steps on the CPU with a tiny config (checks the script itself)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${FLYWHEEL_HF_PYTHON:-${FLYWHEEL_HOME:-$REPO/.flywheel}/hf-venv/bin/python3}"
TINY=0
case "${1:-}" in
  --tiny) TINY=1 ;;
  '') ;;
  *) echo "gpu-check: unknown argument $1 (usage: bash bench/gpu-check.sh [--tiny])" >&2; exit 2 ;;
esac
[ -x "$PY" ] || { echo "gpu-check: no interpreter $PY (run \`flywheel setup hf\`, or set FLYWHEEL_HF_PYTHON)" >&2; exit 2; }

if [ "$TINY" = 0 ]; then
  command -v nvidia-smi >/dev/null || { echo "gpu-check: no NVIDIA GPU here (nvidia-smi not found); --tiny runs the CPU version" >&2; exit 2; }
  "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || { echo "gpu-check: the torch of $PY sees no CUDA device (the pinned CPU build?): set FLYWHEEL_HF_PYTHON to a CUDA build" >&2; exit 2; }
  LAYERS=30 HIDDEN=1024 HEADS=16 VOCAB=8192 LEN=512 BATCH=16 STEPS=100 LOG=10 PRECISION=bf16 BF16=--bf16 WORDS=240,160
else
  LAYERS=2 HIDDEN=64 HEADS=4 VOCAB=384 LEN=128 BATCH=4 STEPS=20 LOG=5 PRECISION=fp32 BF16= WORDS=10,6
  export FLYWHEEL_TORCH_THREADS="${FLYWHEEL_TORCH_THREADS:-2}"
fi
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_VERBOSITY=error HF_DATASETS_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/data" "$WORK/run"

# Synthetic examples: random words from a fixed list (each about one token once the tokenizer has learnt them), a
# prompt and a completion of WORDS words, together about LEN tokens.
"$PY" - "$WORK" "$WORDS" <<'EOF'
import json, random, sys
work, (prompt_words, completion_words) = sys.argv[1], map(int, sys.argv[2].split(','))
rng = random.Random(0)
words = [''.join(rng.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(rng.randint(3, 8))) for _ in range(5000)]
with open(f'{work}/data/train.jsonl', 'w') as f, open(f'{work}/text.txt', 'w') as t:
    for i in range(2000):
        prompt = ' '.join(rng.choice(words) for _ in range(prompt_words)) + ' ->'
        completion = ' ' + ' '.join(rng.choice(words) for _ in range(completion_words))
        f.write(json.dumps({'prompt': prompt, 'completion': completion, 'category': 'synthetic', 'weight': 1, 'source': 'base'}) + '\n')
        if i < 400:
            t.write(prompt + completion + '\n')
open(f'{work}/data/train.txt', 'w').write('')
EOF
"$PY" "$REPO/trainers/hf/tiny_model.py" --out "$WORK/model" --text "$WORK/text.txt" --layers "$LAYERS" --hidden "$HIDDEN" \
  --heads "$HEADS" --vocab-size "$VOCAB" --max-positions "$LEN"

cat > "$WORK/run/run.json" <<EOF
{"runId": "gpu-check", "experimentId": "gpu-check", "recipe": "hf", "seed": 1, "baseCheckpoint": null, "checkpointEvery": 0,
 "params": {"model": "$WORK/model", "steps": $STEPS, "batchSize": $BATCH, "maxLength": $LEN, "lr": 0.0003, "logEvery": $LOG,
            "precision": "$PRECISION"},
 "dataset": {"versionId": "gpu-check", "path": "$WORK/data", "trainFile": "train.txt", "examplesFile": "$WORK/data/train.jsonl"}}
EOF
START=$(date +%s.%N)
"$PY" "$REPO/trainers/hf/main.py" train --run-dir "$WORK/run"
MID=$(date +%s.%N)
# shellcheck disable=SC2086
"$PY" "$REPO/bench/hf-bare-trl.py" --model "$WORK/model" --examples "$WORK/data/train.jsonl" --steps "$STEPS" --batch "$BATCH" \
  --max-length "$LEN" --lr 0.0003 --log-every "$LOG" --seed 1 ${FLYWHEEL_TORCH_THREADS:+--threads $FLYWHEEL_TORCH_THREADS} \
  $BF16 --out "$WORK/bare-out" > "$WORK/bare.jsonl"
END=$(date +%s.%N)

"$PY" - "$WORK" "$REPO" "$START" "$MID" "$END" <<'EOF'
import json, sys
work, repo = sys.argv[1:3]
start, mid, end = map(float, sys.argv[3:6])
sys.path.insert(0, f'{repo}/trainers/torch')
import torch
from throughput import peak_flops
device = torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')
peak = peak_flops(device)
ours = [json.loads(l) for l in open(f'{work}/run/metrics.jsonl') if l.strip()]
bare_lines = [json.loads(l) for l in open(f'{work}/bare.jsonl') if l.strip().startswith('{')]
bare = [l for l in bare_lines if 'step' in l]
n = next(l['params'] for l in bare_lines if 'params' in l)
steady = lambda ws: sum(w['tokens_per_s'] for w in ws[1:]) / max(1, len(ws) - 1)  # the first window pays for warm-up
a, b = steady(ours), steady(bare)
mfu = lambda tps: f'{100 * 6 * n * tps / peak:.1f}%' if peak else 'n/a (unknown peak: set FLYWHEEL_PEAK_FLOPS)'
name = torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'
print(f'gpu-check: {name}, Llama {n / 1e6:.1f}M parameters, {ours[-1]["step"]} steps')
print(f'  hf trainer: {a:,.0f} tokens/s, MFU {mfu(a)}')
print(f'  bare TRL:   {b:,.0f} tokens/s, MFU {mfu(b)}')
whole = lambda tokens, seconds: f'{seconds:.1f} s whole run, {tokens / seconds:,.0f} tokens/s over it'
print(f'  hf trainer whole run: {whole(ours[-1]["tokens"], mid - start)}')
print(f'  bare TRL whole run:   {whole(next(l["tokens"] for l in bare_lines if "tokens" in l and "step" not in l), end - mid)}')
print(f'  ratio hf/bare (steady): {a / b:.3f}')
EOF
