"""One name per idea: a CLI flag, an API keyword and a JSON field that mean one thing have one
name (SPEC's vocabulary), read from the request types, the click commands and the JSON written.

- a command's option that sets a request field is ``--`` + the field's name, with its default,
  help and choices;
- one long flag is one parameter everywhere, and no two visible flags spell one parameter;
- a field name that two request types share means one thing in both (same type, range, choices);
- the JSON written for a request (``--json``'s ``config``, ``sample``'s settings) uses the field
  names.
"""
from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

from infill.config import DecodeConfig
from infill.requests import RescoreRequest, SampleRequest, ServeLimits
from infill_cli.main import main

REQUESTS = [DecodeConfig, SampleRequest, RescoreRequest, ServeLimits]
COMMAND_REQUESTS = {"run": DecodeConfig, "sample": SampleRequest, "rescore": RescoreRequest,
                    "serve": ServeLimits}
"""The request type each command's options build."""


def command(name: str) -> click.Command:
    ctx = click.Context(main)
    cmd = main.get_command(ctx, name)
    assert cmd is not None, name
    return cmd


def options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


def long_flags(opt: click.Option) -> list[str]:
    return [o for o in (*opt.opts, *opt.secondary_opts) if o.startswith("--")]


def all_commands() -> dict[str, click.Command]:
    ctx = click.Context(main)
    return {name: main.get_command(ctx, name) for name in main.list_commands(ctx)}


@pytest.mark.parametrize("name, request_type", COMMAND_REQUESTS.items())
def test_options_that_set_a_field_are_named_after_it(name, request_type):
    fields = request_type.fields()
    covered = []
    for opt in options(command(name)):
        if opt.name not in fields:
            continue
        covered.append(opt.name)
        rules = request_type.rules(opt.name)
        assert f"--{opt.name.replace('_', '-')}" in long_flags(opt), (name, opt.opts)
        if opt.multiple:
            continue
        assert opt.default == fields[opt.name].default, (name, opt.name)
        assert opt.help.startswith(rules.help), (name, opt.name)
        if rules.choices is not None:
            assert list(opt.type.choices) == list(rules.names()), (name, opt.name)
    assert covered, name


def test_a_flag_is_one_parameter_everywhere():
    """Visible options only: a hidden one is an old spelling kept for a release."""
    param_of: dict[str, set[str]] = {}
    for cmd in all_commands().values():
        for opt in options(cmd):
            if opt.hidden:
                continue
            for flag in long_flags(opt):
                name = opt.name
                if name.endswith("s") and flag == f"--{name[:-1].replace('_', '-')}":
                    name = name[:-1]                   # --model repeated sets `models`
                param_of.setdefault(flag.removeprefix("--no-") if opt.is_flag else flag,
                                    set()).add(name)
    assert {f: p for f, p in param_of.items() if len(p) > 1} == {}


def test_a_parameter_is_spelled_by_its_own_name():
    """Where ``--name`` exists for a parameter ``name`` in some command, every command spells
    that parameter with it (older spellings may follow as aliases)."""
    flags = {f for cmd in all_commands().values() for opt in options(cmd) for f in long_flags(opt)}
    for cname, cmd in all_commands().items():
        for opt in options(cmd):
            own = f"--{opt.name.replace('_', '-')}"
            if not opt.hidden and own in flags:
                assert own in long_flags(opt), (cname, opt.name, opt.opts)


def test_a_field_name_means_one_thing_in_every_request():
    seen: dict[str, tuple] = {}
    for request_type in REQUESTS:
        for f in dataclasses.fields(request_type):
            rules = request_type.rules(f.name)
            if rules is None:
                continue
            key = (rules.kind, rules.low, rules.high, rules.names())
            assert seen.setdefault(f.name, key) == key, (request_type.__name__, f.name)


def test_old_spellings_are_read_with_a_warning_once_per_type():
    for request_type in REQUESTS:
        for old, new in request_type.RENAMED.items():
            assert new in request_type.fields() and old not in request_type.fields()
    with pytest.warns(DeprecationWarning, match="'order' is now 'sweep_order'"):
        assert SampleRequest.from_options(order="random").sweep_order == "random"
    with pytest.warns(DeprecationWarning, match="'kind' is now 'energy'"):
        assert RescoreRequest.from_options(kind="raw").energy == "raw"


@pytest.mark.parametrize("request_type", REQUESTS)
def test_request_json_uses_the_field_names(request_type):
    assert list(request_type().to_json()) == list(request_type.fields())


def test_run_json_config_uses_the_decode_field_names(bert_dir):
    r = CliRunner().invoke(main, ["run", "--model", bert_dir, "--json", "--beam-size", "3",
                                  "--no-dedup", "--order", "best-to-worst", "the ___ sat"])
    assert r.exit_code == 0, r.output
    config = json.loads(r.stdout)["config"]
    assert set(config) - {"defaults"} == set(DecodeConfig.fields())   # + the model's defaults used
    assert (config["beam_size"], config["dedup"], config["order"]) == (5, False, "best-to-worst")


def test_sample_json_settings_use_the_sample_field_names(bert_dir):
    r = CliRunner().invoke(main, ["sample", "--model", bert_dir, "--json", "--epochs", "2",
                                  "--chains", "2", "--sweep-order", "random", "the ___ sat"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    fields = set(SampleRequest.fields())
    assert fields - {"max_rows"} <= set(row), sorted(fields - set(row))
    assert (row["sweep_order"], row["epochs"], row["chains"]) == ("random", 2, 2)
