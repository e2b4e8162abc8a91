"""Shared set-up of the model tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from infill.data.builtins import builtin_path


@pytest.fixture(scope="session")
def tiny_char():
    """``tiny_char(**parts)``: an untrained 1-layer Greek character model (seed 0) with the
    given parts set on it (``phrases=``, ``shapes=``, ``gate=``, ...)."""
    import torch

    from infill.data.greek import GREEK
    from infill.models.char import CharConfig, CharMaskedLM, CharTransformer

    def make(**parts) -> CharMaskedLM:
        torch.manual_seed(0)
        net = CharTransformer(CharConfig(d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                         max_length=64))
        model = CharMaskedLM(net, GREEK, device="cpu")
        for name, part in parts.items():
            setattr(model, name, part)
        return model
    return make


@pytest.fixture
def char_described(tmp_path, tiny_char):
    """``char_described(part, settings, mixtures=None)``: the folder of :func:`tiny_char`'s model
    saved through the real writer, its ``charmodel.json`` holding ``part``: ``settings`` (and
    ``"mixtures"`` where given)."""
    from infill.data.greek import GREEK
    from infill.models.char import save_char

    def make(part: str, settings, mixtures=None) -> Path:
        d = save_char(tiny_char().model, tmp_path / "m", GREEK)
        meta = json.loads((d / "charmodel.json").read_text())
        meta[part] = settings
        if mixtures is not None:
            meta["mixtures"] = mixtures
        (d / "charmodel.json").write_text(json.dumps(meta))
        return d
    return make


@pytest.fixture(scope="session")
def char_with_lexicon(tmp_path_factory):
    """``char_with_lexicon(alphabet, words, seed, max_length)``: the folder (str) of a tiny random
    character model of ``alphabet`` saved through the real writer, with ``words`` (word ->
    weight) as its ``lexicon.tsv``."""
    import torch

    from infill.models.char import CharConfig, CharTransformer, save_char

    def make(alphabet, words: dict, seed: int, max_length: int) -> str:
        torch.manual_seed(seed)
        config = CharConfig(d_model=32, n_layers=1, n_heads=2, d_ff=64, max_length=max_length,
                            n_inputs=len(alphabet), n_outputs=alphabet.n_outputs,
                            pad_id=alphabet.pad_id)
        path = save_char(CharTransformer(config, None, alphabet).eval(),
                         tmp_path_factory.mktemp("lexicon") / "m", alphabet, dtype=torch.float32)
        rows = "".join(f"{w}\t{n}\n" for w, n in words.items())
        (path / "lexicon.tsv").write_text(
            f'#infill-lexicon {{"beta": 1.0, "letters": "{alphabet.letters}"}}\n{rows}')
        return str(path)
    return make


@pytest.fixture(scope="session")
def front_ends_agree():
    """``front_ends_agree(path, text, note)``: the top 3 completions of ``text`` by the model
    at ``path`` through the Python API, ``infill run --json`` and ``POST /api/fill`` are the
    same, each with the API's note holding ``note``; returns the API's completions."""
    def check(path: str, text: str, note: str) -> list:
        import infill
        from click.testing import CliRunner

        from infill_cli.main import main
        [api] = infill.fill_each(infill.load_model(path, device="cpu"), [text], top_k=3)
        said = next(n for n in api.notes if note in n)
        r = CliRunner().invoke(main, ["run", "--model", path, "--json", "-k", "3", text])
        assert r.exit_code == 0, r.output
        line = json.loads(r.stdout)
        assert [c["text"] for c in line["completions"]] == [c.text for c in api.completions]
        assert said in line["notes"]
        pytest.importorskip("fastapi")
        from fastapi.testclient import TestClient

        from infill.serve.app import create_app
        from infill.serve.catalog import ModelCatalog
        app = create_app(ModelCatalog(extra=(path,), device="cpu"), default_model=path)
        with TestClient(app, raise_server_exceptions=False,
                        base_url="http://127.0.0.1:8000") as c:
            got = c.post("/api/fill", json={"text": text, "top_k": 3})
            assert got.status_code == 200, got.text
            assert [x["text"] for x in got.json()["completions"]] == \
                [x.text for x in api.completions]
            assert said in got.json()["notes"]
        return api.completions
    return check


@pytest.fixture(scope="module")
def recommending(tmp_path_factory):
    """``recommending(name, defaults)``: a copy of builtin ``name``'s folder whose
    ``defaults.json`` is ``defaults`` (the folder keeps the builtin's name)."""
    def copy(name: str, defaults: dict) -> Path:
        d = tmp_path_factory.mktemp("m") / name
        shutil.copytree(builtin_path(f"builtin:{name}"), d)
        (d / "defaults.json").write_text(json.dumps(defaults))
        return d
    return copy


@pytest.fixture(scope="session")
def mixture_is():
    """``mixture_is(memory, text, where, brute, seed)``: a phrase or shape memory mixes random
    log q at the characters ``where`` of ``text`` (Greek, ``?`` masked) into exactly
    ``S · M + (1 − ΣM) · q`` off ``^`` and ``-`` (q kept there), M = ``brute(t)`` [V]; the
    result sums to one."""
    import numpy as np
    import torch

    from infill.data.greek import GREEK as A

    def check(memory, text: str, where: list[int], brute, seed: int) -> None:
        V = A.n_outputs
        ids = torch.tensor([[A.start_id] + [A.mask_id if c == "?" else A.char_to_id(c)
                                            for c in text]])
        pos = torch.tensor([[t + 1 for t in where]])
        logq = torch.log_softmax(torch.randn(1, len(where), V,
                                             generator=torch.Generator().manual_seed(seed)), -1)
        mixed = memory.mix(logq, ids, pos)
        special = torch.zeros(V, dtype=torch.bool)
        special[[A.unk_id, A.missing_id]] = True
        for j, t in enumerate(where):
            m = torch.from_numpy(np.asarray(brute(t), dtype=np.float64))
            q = logq[0, j].double().exp()
            want = torch.where(special, q, q[~special].sum() * m + (1 - m.sum()) * q)
            got = mixed[0, j].double().exp()
            torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-7)
            assert abs(float(got.sum()) - 1) < 1e-5 and not torch.isnan(mixed).any()
            assert torch.equal(mixed[0, j, special], logq[0, j, special])
    return check


@pytest.fixture(scope="session")
def train_greek():
    """``train_greek(lines, folder, steps, batch_size)``: a 1-layer greek model trained by the
    CLI on ``lines`` into ``folder / "model"`` (returned)."""
    from click.testing import CliRunner

    from infill_cli.main import main

    def train(lines: list[str], folder: Path, steps: int = 2, batch_size: int = 4) -> Path:
        (folder / "g.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = folder / "model"
        r = CliRunner().invoke(main, ["train", "greek", str(folder / "g.txt"), "--out",
                                      str(out), "--steps", str(steps), "--batch-size",
                                      str(batch_size), "--layers", "1", "--hidden", "16",
                                      "--heads", "2", "--max-length", "64", "--no-progress"])
        assert r.exit_code == 0, r.output
        return out
    return train


@pytest.fixture(scope="session")
def load_error_line():
    """``infill run -m DIR TEXT`` on a model whose ``charmodel.json`` is bad: exit 2, no
    traceback, one line naming the file and holding ``says``."""
    from click.testing import CliRunner

    from infill_cli.main import main

    def check(d: Path, text: str, says: str) -> None:
        r = CliRunner().invoke(main, ["run", "-m", str(d), text])
        assert r.exit_code == 2 and "Traceback" not in r.output, r.output
        assert says in r.output and "charmodel.json" in r.output
        assert len(r.output.strip().splitlines()) == 1
    return check
