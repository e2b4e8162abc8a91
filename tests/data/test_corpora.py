"""Corpus readers: plain lines, FASTA, JSONL, normalized Greek, hf: datasets (infill.data.corpora)."""
import pytest

from infill.data import corpora
from infill.errors import ConfigError, InputError


# ---- data --------------------------------------------------------------------------------------
def test_readers(tmp_path):
    fa = tmp_path / "x.fa"
    fa.write_text(">a\nMKV\nLLA\n\n>b desc\nGGS\n")
    assert corpora.load_texts(str(fa)) == ["MKVLLA", "GGS"]
    js = tmp_path / "x.jsonl"
    js.write_text('{"text": "one"}\n\n{"text": " two "}\n')
    assert corpora.load_texts(str(js)) == ["one", "two"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "one"}\n{"txt": 1}\n')
    with pytest.raises(InputError, match="bad.jsonl:2"):
        corpora.load_texts(str(bad))
    txt = tmp_path / "x.txt"
    txt.write_text("a b\n\n  c  \n")
    assert corpora.load_texts(str(txt)) == ["a b", "c"]
    with pytest.raises(InputError, match=r"x.txt:1: sequence text before the first '>'"):
        corpora.load_texts(str(txt), fmt="fasta")      # one FASTA reader, strict everywhere
    with pytest.raises(InputError, match="not found"):
        corpora.load_texts(str(tmp_path / "none.txt"))


def test_greek_format_normalizes(tmp_path):
    from infill.data.greek import normalize
    g = tmp_path / "g.txt"
    line = "Μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος"
    g.write_text(line + "\n")
    assert corpora.load_texts(str(g), fmt="greek") == [normalize(line).strip()]


def test_hf_dataset_without_datasets_package(monkeypatch):
    import builtins
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "datasets":
            raise ImportError("no datasets")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ConfigError, match="optional 'datasets' package"):
        corpora.load_texts("hf:wikitext:test:text")
