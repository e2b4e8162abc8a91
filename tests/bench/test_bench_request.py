"""BenchRequest and ``infill bench``: the request's fields and the command's flags name the same
things; old spellings (keywords, flags, a config.json written under the old names) still work."""
from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from infill.bench import BenchConfig, BenchRequest, run_bench
from infill.bench.request import GRID_AXES
from infill.config import DecodeConfig
from infill.errors import ConfigError
from infill_cli.main import main

PARAM_OF_FIELD = {"compile": "compile_model"}
"""Fields whose flag (``--compile``) is a shared option with another parameter name."""
FLAG_OF_FIELD = {"data_root": "--data-dir"}
"""The one field whose flag is not ``--`` + its name: the shared --data-dir of every command."""


def _bench() -> click.Command:
    return main.get_command(click.Context(main), "bench")


def _flags(opt) -> list[str]:
    return [o for o in (*opt.opts, *opt.secondary_opts) if o.startswith("--")]


def test_every_field_is_a_flag_of_bench_with_its_name():
    params = {p.name: p for p in _bench().params}
    assert isinstance(params["data"], click.Argument)             # DATA
    for name in BenchRequest.fields():
        if name == "data":
            continue
        opt = params[PARAM_OF_FIELD.get(name, name)]
        flag = FLAG_OF_FIELD.get(name, "--" + name.replace("_", "-"))
        assert flag in _flags(opt), (name, opt.opts)


def test_the_flags_defaults_and_help_are_the_fields():
    fields = BenchRequest.fields()
    for opt in _bench().params:
        if not isinstance(opt, click.Option) or opt.name not in fields or opt.name in (
                "model", "seed", "device", "dtype", "quantize", "data_root", "examples"):
            continue        # shared options of every command; examples: 0 means all
        rules = BenchRequest.rules(opt.name)
        default = opt.type.convert(opt.default, opt, None) if opt.default not in (None, ()) \
            else opt.default
        assert default == fields[opt.name].default, opt.name
        if opt.name != "methods":                   # its help lists the method names
            assert opt.help.startswith(rules.help), opt.name
        if rules.choices is not None:
            assert list(opt.type.choices) == list(rules.names()), opt.name
    assert fields["examples"].default == 200 == _param("examples").default


def _param(name):
    return next(p for p in _bench().params if p.name == name)


def test_fields_shared_with_decoding_are_decodings():
    for name in ("dedup", "allow_special", "seed"):
        assert BenchRequest.fields()[name].default == DecodeConfig.fields()[name].default
        a, b = BenchRequest.rules(name), DecodeConfig.rules(name)
        assert (a.kind, a.low, a.high, a.help) == (b.kind, b.low, b.high, b.help)
    a, b = BenchRequest.rules("beam_size"), DecodeConfig.rules("beam_size")
    assert (a.kind, a.low, a.high, a.many) == (b.kind, b.low, b.high, True)
    with pytest.raises(ConfigError, match="beam size must be an integer in") as e:
        BenchRequest(model="m", data="d", beam_size=(5, 0))
    assert e.value.field == "beam_size"


def test_old_keywords_are_read_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'beams' is now 'beam_size'"):
        r = BenchConfig(model="m", data="d", beams=[5, 20], ks=[1, 5], limit=None,
                        pivots=["[CLS]"], fmt="lines")
    assert (r.beam_size, r.top_k, r.examples, r.pivot, r.format) == \
        ((5, 20), (1, 5), None, ("[CLS]",), "lines")
    assert set(BenchRequest.RENAMED.values()) <= set(BenchRequest.fields())
    assert set(GRID_AXES) <= set(BenchRequest.fields())
    with pytest.warns(UserWarning, match="gap length 2 given more than once"):
        assert BenchRequest(model="m", data="d", gap_lengths=[2, 3, 2]).gap_lengths == (2, 3)
    with pytest.warns(DeprecationWarning, match="'gaps' is now 'gap_lengths'"):
        old = BenchConfig(model="m", data="d", gaps=[1, 4])
    assert old.gap_lengths == (1, 4) and "gaps" not in old.to_json()
    with pytest.warns(DeprecationWarning, match="gap_lengths"):
        assert old.gaps == (1, 4)                 # a selector of one's own reading the old name


def test_the_runs_kept_under_benchmarks_results_read_back_as_their_requests():
    """Every bench ``config.json`` kept in the repository (written with ``gaps``) reads back as
    the request that wrote it, so a re-run with the same flags resumes it."""
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
    records = [json.loads(p.read_text()) for p in sorted(root.rglob("config.json"))]
    records = [r for r in records if "model_fingerprint" in r]
    assert len(records) >= 10 and any("gaps" in r for r in records)
    for record in records:
        record = BenchRequest.stored(record)
        kept = {k: v for k, v in record.items() if k not in ("model_fingerprint", "selector")}
        assert BenchRequest(**kept).to_json() == kept


def test_cli_flags_new_and_old_set_the_same_request(tmp_path, bert_dir):
    data = tmp_path / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat on the mat\n")
    common = [str(data), "-m", bert_dir, "--methods", "hcb-l2r", "-n", "0",
              "--no-progress", "--json", "--device", "cpu"]
    new = CliRunner().invoke(main, ["bench", *common, "--out", str(tmp_path / "a"),
                                    "--beam-size", "2,3", "--top-k", "1,2", "--gap-lengths", "1"])
    assert new.exit_code == 0, new.output
    old = CliRunner().invoke(main, ["bench", *common, "--out", str(tmp_path / "b"),
                                    "--beams", "2,3", "--topk", "1,2", "--gaps", "1"])
    assert old.exit_code == 0, old.output
    assert "Warning: --beams is deprecated; use --beam-size" in old.stderr
    assert "Warning: --topk is deprecated; use --top-k" in old.stderr
    assert old.stderr.count("Warning: --gaps is deprecated; use --gap-lengths") == 1
    a, b = (json.loads((tmp_path / d / "config.json").read_text()) for d in "ab")
    assert a == b and a["beam_size"] == [2, 3] and a["top_k"] == [1, 2] and a["examples"] is None
    assert a["gap_lengths"] == [1] and "gaps" not in a
    assert json.loads(new.stdout)["config"] == {k: v for k, v in a.items()
                                                if k != "model_fingerprint"}
    bad = CliRunner().invoke(main, ["bench", *common, "--out", str(tmp_path / "c"),
                                    "--gap-lengths", "1", "--beam-size", "2,x"])
    assert bad.exit_code == 2 and "Error: --beam-size must be comma-separated integers" in bad.output


def test_a_run_recorded_under_the_old_names_resumes(tmp_path, bert_dir, bert):
    data = tmp_path / "data.txt"
    data.write_text("the cat sat on the mat\nthe dog sat on the mat\n")
    req = BenchRequest(model=bert_dir, data=str(data), gap_lengths=(1,), methods=("hcb-l2r",),
                       beam_size=(2,), top_k=(1, 2), examples=None, device="cpu")
    first = run_bench(req, tmp_path / "out", model=bert, progress=False)
    path = tmp_path / "out" / "config.json"
    new_names = {v: k for k, v in BenchRequest.RENAMED.items()}
    path.write_text(json.dumps({new_names.get(k, k): v for k, v in
                                json.loads(path.read_text()).items()}))
    assert {"beams", "gaps"} <= set(json.loads(path.read_text()))
    again = run_bench(req, tmp_path / "out", model=bert, progress=False)
    def strip(summary):
        return [{k: v for k, v in c.items() if k != "examples_per_s"} for c in summary["cells"]]

    assert again["complete"] and strip(again) == strip(first)
    with pytest.raises(ConfigError, match=r"different arguments \(beam_size\)"):
        run_bench(req.replace(beam_size=(3,)), tmp_path / "out", model=bert, progress=False)
