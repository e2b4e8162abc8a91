#!/usr/bin/env bash
# One prepared GPU session (a lent machine, minutes of device time): the suite's CUDA paths, the
# decoder's speed on CUDA in float32 / bf16 / fp16, and one resumable training run of a larger
# builtin:greek network (issue 35, item 4), all in one command. Run from the repository root:
#
#     OUT=/some/folder bash benchmarks/gpu_session.sh [TOTAL_SECONDS]
#
# It expects .gpu/iospe.tgz and .gpu/perseus_grc.txt.gz (the IOSPE EpiDoc folder and the literary
# corpus of ../shared/data/greek, packed to travel) and optional wheels in .whl/ for packages the
# machine lacks (fair-esm, bert-score). Everything it reports lands in $OUT; the training keeps its
# best snapshot by validation loss. Numbers it produced are recorded in docs/BENCHMARKS.md.
#
# The checkout travels to the GPU machine whole, at most 64 MiB, and the tracked tree is about
# 89 MB: builtin:english's memory (25.6 MB) and builtin:greek's shape memory (14.9 MB; the model
# loads without it, restoring as before it) are to be left behind (`git rm --cached` each, the paths added
# to .git/info/exclude; both undone after the run), as the memory was for the run of 2026-11-26.
set -u
TOTAL=${1:-540}
DEVICE=${DEVICE:-cuda} PROBE=${PROBE:-50} BATCH=${BATCH:-128}   # overridable for a dry run
START=$SECONDS
left() { echo $(( TOTAL - (SECONDS - START) )); }
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT" /tmp/data/greek /tmp/site
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/machine.txt"

# --- install: the checkout, without fetching anything ----------------------------------------
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . 2>&1 | tail -2
python3 -c "import torch, transformers, infill; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/machine.txt"
tar xzf .gpu/iospe.tgz -C /tmp/data/greek && gunzip -c .gpu/perseus_grc.txt.gz \
  > /tmp/data/greek/perseus_grc.txt

# --- speed: bert-base on CUDA in each precision (uncontended: before anything else) ------------
for dtype in float32 bf16 fp16; do
  extra=""; [ "$dtype" = float32 ] && extra="--reference"
  [ -n "${SKIP_SPEED:-}" ] && break
  timeout 70 python3 benchmarks/speed.py --models bert-base --device $DEVICE --dtype $dtype \
    --repeats 3 $extra 2>&1 | grep -v Warning | tee -a "$OUT/speed.md"
done

# --- training (background): a probe of 50 steps sizes the plan to the time left ----------------
RUN=/tmp/greek_gpu
train() {
  python3 -m infill_cli.main train greek --data-dir /tmp/data --out $RUN --batch-size $BATCH \
    --lr 1e-3 --warmup 300 --hidden 256 --layers 6 --heads 4 --ff 1024 --max-length 512 \
    --conv-kernel 5 --span 10 --span-p 0.3 --words 10000 --inscriptions /tmp/data/greek/iospe \
    --inscription-copies 24 --no-progress --device $DEVICE --dtype bf16 "$@"
}
(
  train --steps 100000 --stop-after $PROBE --eval-every $PROBE --checkpoint-every $PROBE
  read per_step used < <(python3 -c "import json; r=[json.loads(l) for l in open('$RUN/train_log.jsonl')]; \
print((r[-1]['elapsed_s'] - r[0]['elapsed_s']) / $PROBE, r[-1]['elapsed_s'])")
  budget=$(( $(left) - 60 ))       # seconds this leg may train (the run's clock adds the probe's)
  steps=$(python3 -c "print(max(2 * $PROBE, int($PROBE + 0.85 * $budget / $per_step)))")
  echo "probe: $per_step s/step; planning $steps steps in ${budget}s"
  budget=$(python3 -c "print(int($used + $budget))")
  every=$(python3 -c "print(max(50, $steps // 8))")
  train --resume --steps $steps --time-budget $budget --eval-every $every \
    --checkpoint-every $every --snapshot-every $every
  echo "training ended: $?"
) > "$OUT/train.log" 2>&1 &
TRAIN=$!

# --- the suite's CUDA paths, beside the training ---------------------------------------------
timeout 150 python3 -m pytest --device $DEVICE tests/models/test_device.py -p no:cacheprovider \
  2>&1 | tail -25 | tee "$OUT/tests_device.log"
# -v: each test's verdict is printed as it ends, so a time-out still leaves the failures' names
timeout $(( $(left) - 90 )) python3 -m pytest --device $DEVICE -m "not slow" -n 8 -v -rfE \
  -p no:cacheprovider --ignore=tests/serve tests/models tests/decoding tests/joint tests/mcmc \
  tests/test_readings.py tests/test_check.py > "$OUT/tests_suite.log" 2>&1
grep -E "FAILED|ERROR" "$OUT/tests_suite.log" | sort -u | tail -40; tail -3 "$OUT/tests_suite.log"

wait $TRAIN
tail -5 "$OUT/train.log"
# --- the best snapshot by validation loss comes back -----------------------------------------
python3 - "$RUN" "$OUT" <<'EOF'
import json, shutil, sys, tarfile
from pathlib import Path
run, out = Path(sys.argv[1]), Path(sys.argv[2])
log = [json.loads(l) for l in (run / "train_log.jsonl").read_text().splitlines()]
snaps = {int(p.name[4:]): p for p in (run / "snapshots").glob("step*")} if (run / "snapshots").exists() else {}
snaps.setdefault(log[-1]["step"], run)      # the model the run ended with
best = min((r for r in log if r["step"] in snaps), key=lambda r: r["val_loss"])
src = snaps[best["step"]]
print("best step", best["step"], "val_loss", best["val_loss"], "from", src)
shutil.copy(src / "model.safetensors", out / "model.safetensors")
with tarfile.open(out / "run.tgz", "w:gz") as t:
    for name in ("charmodel.json", "train_log.jsonl", "train_info.json", "split.json"):
        t.add(run / name, arcname=name)
    t.add(src / "charmodel.json", arcname="best_charmodel.json")
(out / "best.json").write_text(json.dumps(best))
EOF
echo "done in $((SECONDS - START)) s"
