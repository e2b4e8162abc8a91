"""The one FASTA reader (infill.data.fasta)."""
import pytest

from infill.data.fasta import read_fasta
from infill.errors import InputError


def test_read_fasta(tmp_path):
    f = tmp_path / "x.fa"
    f.write_text(">a first\nMKV\nla*\n\n>b\nMJ1K\n>empty\n")
    assert [(r.header, r.sequence, r.id) for r in read_fasta(f)] == [("a first", "MKVla*", "a"),
                                                                      ("b", "MJ1K", "b")]
    (tmp_path / "bad.fa").write_text("MKV\n>a\nMKV\n")
    with pytest.raises(InputError, match="before the first '>'"):
        read_fasta(tmp_path / "bad.fa")
    with pytest.raises(InputError, match="not found"):
        read_fasta(tmp_path / "missing.fa")
