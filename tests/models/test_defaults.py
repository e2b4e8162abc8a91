"""A model's recommended scorer and order (defaults.json): resolved by the library when the user
did not choose, recorded in results and JSON, and said by the CLI."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import infill
from infill.errors import ModelLoadError
from infill.filling.defaults import LIBRARY_DEFAULTS, recommendation, resolve_defaults
from infill_cli.main import main

TEXT = "μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλ??ς"


@pytest.fixture(scope="module")
def greek_dir(recommending):
    """builtin:greek copied, recommending standard best-to-worst."""
    return recommending("greek", {"scorer": "standard", "order": "best-to-worst",
                                  "why": "best top-1  on its\ntest split"})


@pytest.fixture(scope="module")
def greek(greek_dir):
    return infill.load_model(str(greek_dir), device="cpu")


def test_recommendation_read_from_the_folder(greek_dir, tmp_path):
    rec = recommendation(str(greek_dir))
    assert (rec.scorer, rec.order, rec.why) == ("standard", "best-to-worst",
                                                "best top-1 on its test split")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert recommendation(str(plain)) == LIBRARY_DEFAULTS
    assert recommendation("some/hub-id") == LIBRARY_DEFAULTS


@pytest.mark.parametrize("content", ['{"scorer": "ag", "order": "left-to-right", "why": "x"}',
                                     '{"scorer": "hcb", "order": "random", "why": "x"}',
                                     '{"scorer": "hcb", "order": "left-to-right"}', "[1, 2]",
                                     "{not json"])
def test_malformed_defaults_name_the_file(tmp_path, content):
    (tmp_path / "defaults.json").write_text(content)
    with pytest.raises(ModelLoadError, match="defaults.json"):
        recommendation(str(tmp_path))


def test_resolve_keeps_what_the_user_chose(greek_dir):
    cfg, used = resolve_defaults(str(greek_dir), infill.DecodeConfig(beam_size=7))
    assert (cfg.scorer, cfg.order, cfg.beam_size) == ("standard", "best-to-worst", 7)
    assert used.values == {"scorer": "standard", "order": "best-to-worst"}
    assert used.line() == ("scorer: standard, order: best-to-worst (" + str(greek_dir)
                           + "'s defaults: best top-1 on its test split)")
    cfg, used = resolve_defaults(str(greek_dir), infill.DecodeConfig(scorer="hcb"))
    assert (cfg.scorer, cfg.order) == ("hcb", "best-to-worst")
    assert used.line().startswith("order: best-to-worst (") and "'s default: " in used.line()
    # an explicit choice wins, even when it equals infill's own default
    cfg, used = resolve_defaults(str(greek_dir), infill.DecodeConfig(order="left-to-right"))
    assert (cfg.scorer, cfg.order) == ("standard", "left-to-right") and list(used.values) == \
        ["scorer"]
    # a sampling baseline scores with the standard update; AG has neither scorer nor order
    cfg, used = resolve_defaults(str(greek_dir), infill.DecodeConfig(sampling="pure"))
    assert cfg.scorer == "standard" and list(used.values) == ["order"]
    cfg, used = resolve_defaults(str(greek_dir), infill.DecodeConfig(decoder="ag"))
    assert used.values == {} and used.line() == "" and cfg.scorer is None


def test_fill_uses_the_recommendation(greek):
    auto = infill.fill_each(greek, [TEXT], top_k=3)[0]
    explicit = infill.fill(greek, TEXT, top_k=3, scorer="standard", order="best-to-worst")[0]
    assert [(c.text, c.score) for c in auto.completions] == \
        [(c.text, c.score) for c in explicit]
    assert auto.defaults.values == {"scorer": "standard", "order": "best-to-worst"}
    assert (auto.config.scorer, auto.config.order) == ("standard", "best-to-worst")
    hcb = infill.fill(greek, TEXT, top_k=3, scorer="hcb", order="best-to-worst")[0]
    assert [c.score for c in hcb] != [c.score for c in explicit]     # the choice matters here
    cfg = infill.DecodeConfig(scorer="hcb")          # the order left out: the model's
    assert infill.fill_each(greek, [TEXT], config=cfg)[0].defaults.values == \
        {"order": "best-to-worst"}
    cfg = infill.DecodeConfig(scorer="hcb", order="left-to-right")
    assert infill.fill_each(greek, [TEXT], config=cfg)[0].defaults.values == {}


def test_cli_json_and_status_line(greek_dir, monkeypatch):
    r = CliRunner().invoke(main, ["run", "--json", "--model", str(greek_dir), "--scorer", "hcb",
                                  TEXT])
    assert r.exit_code == 0, r.output
    config = json.loads(r.stdout)["config"]
    assert (config["scorer"], config["order"]) == ("hcb", "best-to-worst")
    assert config["defaults"] == {"options": ["order"], "source": str(greek_dir),
                                  "why": "best top-1 on its test split"}
    assert r.stderr == ""                        # not a terminal: no status line
    monkeypatch.setattr("infill_cli.status.interactive", lambda: True)
    r = CliRunner().invoke(main, ["run", "--model", str(greek_dir), TEXT])
    assert r.exit_code == 0, r.output
    status, *legend = r.stderr.splitlines()
    assert status.startswith("defaults: scorer standard, order best-to-worst (")  # short: the
    assert len(status) <= 100 and "best top-1" not in status        # why is in --json
    assert legend[0].startswith("score: ")          # the table's columns, the first time


def test_builtin_label(greek_dir, monkeypatch):
    monkeypatch.setenv("INFILL_MODELS_DIR", str(greek_dir.parent))
    assert recommendation("builtin:greek").source == "builtin:greek"
    assert recommendation(str(greek_dir)).source == "builtin:greek"   # a loaded model's name
