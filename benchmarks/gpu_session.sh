#!/usr/bin/env bash
# One prepared GPU session (a lent machine, minutes of device time): the suite's CUDA paths, the
# decoder's speed on CUDA in float32 / bf16 / fp16, and one resumable training run of a larger
# character network -- builtin:latin's (issue 49, TRAIN=latin, the default) or builtin:greek's
# (issue 48, TRAIN=greek) -- all in one command. Run from the repository root:
#
#     bash benchmarks/gpu_pack.sh pack latin          # here, first: .gpu/ and a tree that fits
#     OUT=/some/folder TRAIN=latin bash benchmarks/gpu_session.sh [TOTAL_SECONDS]   # carry .gpu
#     bash benchmarks/gpu_pack.sh unpack              # here, at once after
#
# It expects .gpu/ as gpu_pack.sh writes it (latin: EDH's EpiDoc archive and the Latin literature;
# greek: the IOSPE and IAph folders and the literary corpus) and optional wheels in .whl/ for
# packages the machine lacks (fair-esm, bert-score). Everything it reports lands in $OUT; the
# training keeps its best snapshot by validation loss: $OUT/model.safetensors with run.tgz's
# best_charmodel.json as charmodel.json is a network to measure here, the builtin's lexicon,
# memories and defaults.json copied beside it (benchmarks/iospe_lengths_report.py, validation).
# Numbers it produced are recorded in docs/BENCHMARKS.md and benchmarks/results/.
#
# The builtins' memories and benchmarks/results stay behind (gpu_pack.sh): tests that need a
# builtin's memories fail there and are not the CUDA paths' failures.
set -u
TOTAL=${1:-540}
DEVICE=${DEVICE:-cuda} PROBE=${PROBE:-50} BATCH=${BATCH:-128}   # overridable for a dry run
# STEPS=N plans the run ahead (no probe: the corpora are read once, not twice); the H200 ran
# builtin:greek's 6 x 256 network at about 2 steps a second beside the tests (2026-11-26)
TRAIN=${TRAIN:-latin}
START=$SECONDS
left() { echo $(( TOTAL - (SECONDS - START) )); }
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT" /tmp/data/$TRAIN /tmp/site
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/machine.txt"

# --- install: the checkout, without fetching anything ----------------------------------------
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
[ -n "${SKIP_INSTALL:-}" ] || python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . 2>&1 | tail -2
python3 -c "import torch, transformers, infill; print('torch', torch.__version__, \
'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/machine.txt"
case $TRAIN in
  latin) tar xJf .gpu/edh_epidoc.tar.xz -C /tmp/data/latin &&
         cp .gpu/perseus_lat.txt.xz /tmp/data/latin/ ;;
  greek) tar xzf .gpu/iospe.tgz -C /tmp/data/greek && tar xzf .gpu/iaph.tgz -C /tmp/data/greek &&
         gunzip -c .gpu/perseus_grc.txt.gz > /tmp/data/greek/perseus_grc.txt ;;
  *) echo "TRAIN: latin or greek, not '$TRAIN'" >&2; exit 2 ;;
esac

# --- speed: bert-base on CUDA in each precision (uncontended: before anything else) ------------
for dtype in float32 bf16 fp16; do
  extra=""; [ "$dtype" = float32 ] && extra="--reference"
  [ -n "${SKIP_SPEED:-}" ] && break
  timeout 70 python3 benchmarks/speed.py --models bert-base --device $DEVICE --dtype $dtype \
    --repeats 3 $extra 2>&1 | grep -v Warning | tee -a "$OUT/speed.md"
done

# --- training (background): a probe of 50 steps sizes the plan to the time left ----------------
RUN=/tmp/${TRAIN}_gpu
train() {       # builtin:latin's and builtin:greek's recipes (data/README.md), a larger network
  local data=(--inscriptions /tmp/data/latin/edh --inscription-copies 4)
  [ "$TRAIN" = greek ] && data=(--inscriptions /tmp/data/greek/iospe \
    --inscriptions /tmp/data/greek/iaph --inscription-copies 16 --words 10000)
  python3 -m infill_cli.main train $TRAIN --data-dir /tmp/data --out $RUN --batch-size $BATCH \
    --lr 1e-3 --warmup 300 --hidden 256 --layers 6 --heads 4 --ff 1024 --max-length 512 \
    --conv-kernel 5 --span 10 --span-p 0.3 "${data[@]}" --max-val-examples 256 \
    --no-progress --device $DEVICE --dtype ${TRAIN_DTYPE:-bf16} "$@"
}
(
  if [ -n "${STEPS:-}" ]; then     # planned ahead: one leg, the corpora read once (~150 s)
    every=$(python3 -c "print(max(50, $STEPS // 8))")
    train --steps $STEPS --time-budget $(( $(left) - 60 )) --eval-every $every \
      --checkpoint-every $every --snapshot-every $every
  else                             # a probe of $PROBE steps sizes the plan to the time left
    train --steps 100000 --stop-after $PROBE --eval-every $PROBE --checkpoint-every $PROBE
    read per_step used < <(python3 -c "import json; r=[json.loads(l) for l in open('$RUN/train_log.jsonl')]; \
print((r[-1]['elapsed_s'] - r[0]['elapsed_s']) / $PROBE, r[-1]['elapsed_s'])")
    budget=$(( $(left) - 60 ))     # seconds this leg may train (the run's clock adds the probe's)
    steps=$(python3 -c "print(max(2 * $PROBE, int($PROBE + 0.85 * $budget / $per_step)))")
    echo "probe: $per_step s/step; planning $steps steps in ${budget}s"
    budget=$(python3 -c "print(int($used + $budget))")
    every=$(python3 -c "print(max(50, $steps // 8))")
    train --resume --steps $steps --time-budget $budget --eval-every $every \
      --checkpoint-every $every --snapshot-every $every
  fi
  echo "training ended: $?"
) > "$OUT/train.log" 2>&1 &
TRAINING=$!

# --- the suite's CUDA paths, beside the training ---------------------------------------------
[ -n "${SKIP_TESTS:-}" ] || {
timeout 150 python3 -m pytest --device $DEVICE tests/models/test_device.py -p no:cacheprovider \
  2>&1 | tail -25 | tee "$OUT/tests_device.log"
# -v: each test's verdict is printed as it ends, so a time-out still leaves the failures' names
timeout $(( $(left) - 90 )) python3 -m pytest --device $DEVICE -m "not slow" -n 8 -v -rfE \
  -p no:cacheprovider --ignore=tests/serve tests/models tests/decoding tests/joint tests/mcmc \
  tests/test_readings.py tests/test_check.py > "$OUT/tests_suite.log" 2>&1
grep -E "FAILED|ERROR" "$OUT/tests_suite.log" | sort -u | tail -40; tail -3 "$OUT/tests_suite.log"
}

wait $TRAINING
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
