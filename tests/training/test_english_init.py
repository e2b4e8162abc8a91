"""``infill train english --init-from``: a run that starts from a trained model (the shipped
builtin:english continued next session, or any BERT directory of the same shape)."""
import json
import subprocess
import sys

import numpy as np
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from infill_cli.main import main


def test_an_english_run_starts_from_a_trained_models_weights_and_vocabulary(tmp_path):
    """``--init-from``: the run adopts the source's vocabulary (whatever --vocab-size says) and
    starts from its weights: with a learning rate of ~0 the saved model is the source again.
    A source of another shape is one line naming the option."""
    words = ["the", "and", "my", "lord", "thou", "love", "good", "king", "sweet", "night"]
    rng = np.random.default_rng(0)
    lines = [" ".join(words[j] for j in rng.integers(len(words), size=7)).capitalize() + "."
             for _ in range(300)]
    (tmp_path / "c.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    source = tmp_path / "a"
    r = CliRunner().invoke(main, ["train", "english", str(tmp_path / "c.txt"), "--out", str(source),
                                  "--steps", "3", "--batch-size", "8", "--layers", "1",
                                  "--hidden", "16", "--heads", "2", "--max-length", "32",
                                  "--vocab-size", "120", "--no-progress"])
    assert r.exit_code == 0, r.output
    args = ["train", "english", str(tmp_path / "c.txt"), "--steps", "1", "--batch-size", "8",
            "--layers", "1", "--hidden", "16", "--heads", "2", "--max-length", "32",
            "--vocab-size", "300", "--lr", "1e-12", "--warmup", "0", "--no-progress",
            "--init-from", str(source)]
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b" / "tokenizer" / "vocab.txt").read_text() == \
        (source / "tokenizer" / "vocab.txt").read_text()
    old, new = (load_file(str(d / "model.safetensors")) for d in (source, tmp_path / "b"))
    assert old.keys() == new.keys()
    assert all(torch.equal(old[k], new[k]) for k in old)
    info = json.loads((tmp_path / "b" / "train_info.json").read_text())
    assert info["model"]["init_from"] == str(source)
    piped = subprocess.run([sys.executable, "-m", "infill_cli.main", *args, "--out",
                            str(tmp_path / "d")], capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    assert "Loading weights" not in piped.stderr     # no bar of transformers' on a pipe
    r = CliRunner().invoke(main, [a if a != "16" else "32" for a in args]
                           + ["--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "init_from" in r.output.replace("-", "_")
    assert "does not fit this model" in r.output and "Traceback" not in r.output
    other = tmp_path / "e" / "tokenizer"
    other.mkdir(parents=True)
    (other / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\n", encoding="utf-8")
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path / "e")])
    assert r.exit_code == 2 and "its vocabulary differs" in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    (other / "vocab.txt").write_bytes(b"\xff\xfe[PAD]\n\x80\n")         # not UTF-8
    r = CliRunner().invoke(main, args + ["--out", str(tmp_path / "e")])
    assert r.exit_code == 2 and "its vocabulary differs" in r.output
    for bad, says in (("", "is empty"), (str(tmp_path / "nowhere"), "not a model directory"),
                      (str(tmp_path / "c.txt"), "not a model directory")):
        r = CliRunner().invoke(main, args[:-1] + [bad, "--out", str(tmp_path / "f")])
        assert r.exit_code == 2 and says in r.output and len(r.output.strip().splitlines()) == 1
