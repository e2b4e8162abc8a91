"""A model folder that asks to run its own code (``auto_map``, a ``model_type`` transformers does
not know) is refused in one line by every command that loads a model -- the BERTScore scorer of
``infill bench`` included -- and never prompts (transformers asks "Do you wish to run the custom
code? [y/N]" when a loader leaves ``trust_remote_code`` unset): a ``y`` on stdin runs nothing."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from infill.errors import ModelLoadError
from infill_cli.main import main

CODE = """import pathlib
pathlib.Path({marker!r}).write_text("the folder's code ran")
from transformers import PretrainedConfig
class EvilConfig(PretrainedConfig):
    model_type = "evilbert"
"""


def code_folder(tmp_path, config: dict, tokenizer: dict | None = None):
    """(folder, marker): a model folder whose ``evil.py`` creates ``marker`` when imported."""
    folder, marker = tmp_path / "evil", tmp_path / "MARKER"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    if tokenizer is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    (folder / "evil.py").write_text(CODE.format(marker=str(marker)))
    return folder, marker


AUTO_MAP = {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel",
            "AutoTokenizer": ["evil.EvilTokenizer", None]}
FOLDERS = {
    "auto_map": ({"model_type": "evilbert", "auto_map": AUTO_MAP, "num_hidden_layers": 2}, None),
    "custom model_type": ({"model_type": "evilbert", "num_hidden_layers": 2}, None),
    "tokenizer auto_map": ({"model_type": "bert"}, {"auto_map": AUTO_MAP}),
}


@pytest.fixture
def lines(tmp_path):
    path = tmp_path / "lines.txt"
    path.write_text("αβγδε ζηθ\nικλμν ξοπ\nρστυ φχψω\n", encoding="utf-8")
    return str(path)


def one_error_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    said = r.stderr.strip().split("\n")
    assert len(said) == 1 and said[0].startswith("Error:"), r.stderr
    assert "[y/N]" not in r.output and "Traceback" not in r.output
    return said[0]


@pytest.mark.parametrize("kind", FOLDERS)
def test_bench_refuses_a_bertscore_folder_with_code(tmp_path, lines, kind):
    folder, marker = code_folder(tmp_path, *FOLDERS[kind])
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["bench", lines, "--format", "lines", "-m", "builtin:greek",
                                  "-n", "2", "--gap-lengths", "2", "--bertscore-model", str(folder),
                                  "--out", str(out), "--no-progress"], input="y\n")
    line = one_error_line(r)
    assert "BERTScore scorer" in line and "own code" in line
    assert not marker.exists() and not out.exists()


@pytest.mark.parametrize("kind", FOLDERS)
def test_run_refuses_a_model_folder_with_code(tmp_path, kind):
    folder, marker = code_folder(tmp_path, *FOLDERS[kind])
    r = CliRunner().invoke(main, ["run", "-m", str(folder), "the ___ sat"], input="y\n")
    assert "own code" in one_error_line(r)
    assert not marker.exists()


def test_bertscore_load_refuses_code_and_never_prompts(tmp_path, monkeypatch):
    from infill.bench.metrics import BertScore

    folder, marker = code_folder(tmp_path, *FOLDERS["auto_map"])
    monkeypatch.setattr("builtins.input", lambda *a: pytest.fail("a prompt was shown"))
    with pytest.raises(ModelLoadError, match="auto_map"):
        BertScore.load(str(folder))
    assert not marker.exists()


def test_bertscore_scores_as_bert_score_does(bert_dir):
    """The scorer loaded by infill gives bert-score's own F1 (its BERTScorer, loading the same
    plain BERT folder itself), at the default and at a chosen layer."""
    from bert_score import BERTScorer

    from infill.bench.metrics import BertScore

    cands, refs = ["the cat sat on the mat", "the dog", "mat"], ["the cat sat", "mat on cat", "a"]
    for layer in (None, 1):
        ours = BertScore.load(bert_dir, layer).f1(cands, refs)
        theirs = BERTScorer(model_type=bert_dir, num_layers=layer or 2, device="cpu")
        theirs._tokenizer.model_max_length = 24       # as BertScore caps it (its positions)
        want = [float(f) for f in theirs.score(cands, refs)[2]]
        assert ours == pytest.approx(want, abs=1e-6)
