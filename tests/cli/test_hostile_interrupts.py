"""Interrupting ``infill train`` for real: the command runs in its own process, receives SIGINT
(Ctrl-C) or SIGTERM at an arbitrary moment of the run, and ``--resume`` must then reproduce an
uninterrupted run bit for bit (the log's numbers and the final weights)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

CORPUS = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος οὐλομένην ἣ μυρί Ἀχαιοῖς ἄλγε ἔθηκε\n" * 40
STEPS = 150
ARGS = ["--hidden", "32", "--layers", "2", "--heads", "2", "--max-length", "48", "--batch-size",
        "8", "--eval-every", "1", "--checkpoint-every", "100000",
        "--no-progress", "--json", "--steps", str(STEPS)]
VOLATILE = {"elapsed_s", "cpu_s"}


def _command(corpus: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "infill", "train", "greek", str(corpus), "--out", str(out),
            *ARGS, *extra]


def _env() -> dict:
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}


def _log(out: Path) -> list[dict]:
    path = out / "train_log.jsonl"
    if not path.exists():
        return []
    return [json.loads(ln) for ln in path.read_text().splitlines() if ln.endswith("}")]


def _stable(log: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in VOLATILE} for e in log]


def _result(proc: subprocess.CompletedProcess | subprocess.Popen, stdout: str) -> dict:
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    assert len(lines) == 1, stdout          # --json: the result line alone on stdout
    return json.loads(lines[0])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    d = tmp_path_factory.mktemp("train-ref")
    corpus = d / "c.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    done = subprocess.run(_command(corpus, d / "ref"), capture_output=True, text=True,
                          env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    assert _result(done, done.stdout)["stopped"] == "steps"
    return corpus, d / "ref"


@pytest.mark.slow
@pytest.mark.parametrize("sig, after", [(signal.SIGINT, 5), (signal.SIGTERM, 60)])
def test_interrupted_training_resumes_exactly(reference, tmp_path, sig, after):
    """Signal the run once its log holds ``after`` steps (so at some moment inside a later step),
    then resume: the same log and the same final weights as the uninterrupted run."""
    corpus, ref = reference
    out = tmp_path / "run"
    proc = subprocess.Popen(_command(corpus, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    deadline = time.monotonic() + 300
    while len(_log(out)) <= after and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr
    first = _result(proc, stdout)
    assert first["stopped"] == "interrupted" and after <= first["step"] < STEPS, first
    done = subprocess.run(_command(corpus, out, "--resume"), capture_output=True, text=True,
                          env=_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    assert _result(done, done.stdout)["step"] == STEPS
    assert _stable(_log(out)) == _stable(_log(ref))
    got, want = load_file(out / "model.safetensors"), load_file(ref / "model.safetensors")
    assert got.keys() == want.keys()
    assert all(torch.equal(got[k], want[k]) for k in want)
