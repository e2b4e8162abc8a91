"""One name per idea: a CLI flag, an API keyword and a JSON field that mean one thing have one
name (the project's vocabulary), read from the request types, the click commands and the JSON written.

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

from infill.bench.request import BenchRequest
from infill.check_request import CheckRequest
from infill.config import DecodeConfig
from infill.jobs.fill import FillRequest
from infill.jobs.joint import JointRequest
from infill.requests import RescoreRequest, SampleRequest, ServeLimits
from infill.training.request import ModelOptions, TrainRequest
from infill_cli.main import main

REQUESTS = [DecodeConfig, FillRequest, SampleRequest, RescoreRequest, ServeLimits, JointRequest,
            BenchRequest, TrainRequest, ModelOptions, CheckRequest]
COMMAND_REQUESTS = {"run": DecodeConfig, "sample": SampleRequest, "rescore": RescoreRequest,
                    "serve": ServeLimits, "joint": JointRequest, "bench": BenchRequest,
                    "train": TrainRequest, "check": CheckRequest}
"""The request type each command's options build."""


FAMILY_DEFAULTS = {("train", "lr"), ("train", "damage_rate")}
"""Options left out (None) on the command line that take the trained family's default, filled
in one place (:func:`infill.training.train_request`), not the field's."""


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
        default = opt.default
        if rules.many and isinstance(default, str):           # a grid axis: "2,3,4"
            default = tuple(rules.kind(x) for x in default.split(","))
        if fields[opt.name].default is not dataclasses.MISSING and \
                (name, opt.name) not in FAMILY_DEFAULTS:     # a required field: the CLI's
            assert default == fields[opt.name].default, (name, opt.name)
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


KNOWN_CONFLICTS: dict[str, tuple[str, ...]] = {}
"""Field names two request types still use for two ideas, each with the types (none now:
sample's ``epochs`` became ``sweeps``, leaving ``epochs`` to training). The test fails on any
other, and when a known one is gone (keep the list true)."""


def test_a_field_name_means_one_thing_in_every_request():
    seen: dict[str, tuple] = {}
    conflicts: dict[str, set[str]] = {}
    for request_type in REQUESTS:
        for f in dataclasses.fields(request_type):
            rules = request_type.rules(f.name)
            if rules is None:
                continue
            key = (rules.kind, rules.low, rules.high, rules.names())
            first = seen.setdefault(f.name, (key, request_type.__name__))
            if first[0] != key:
                conflicts.setdefault(f.name, {first[1]}).add(request_type.__name__)
    assert conflicts == {k: set(v) for k, v in KNOWN_CONFLICTS.items()}


def test_old_spellings_are_read_with_a_warning_once_per_type():
    for request_type in REQUESTS:
        for old, new in request_type.RENAMED.items():
            assert new in request_type.fields() and old not in request_type.fields()
    with pytest.warns(DeprecationWarning, match="'order' is now 'sweep_order'"):
        assert SampleRequest.from_options(order="random").sweep_order == "random"
    with pytest.warns(DeprecationWarning, match="'epochs' is now 'sweeps'"):
        assert SampleRequest.from_options(epochs=3).sweeps == 3
    with pytest.warns(DeprecationWarning, match="'kind' is now 'energy'"):
        assert RescoreRequest.from_options(kind="raw").energy == "raw"


REQUIRED = {BenchRequest: {"model": "builtin:english", "data": "english"},
            TrainRequest: {"out": "runs/x", "steps": 1}}
"""The required fields of the request types that have some."""


@pytest.mark.parametrize("request_type", REQUESTS)
def test_request_json_uses_the_field_names(request_type):
    request = request_type(**REQUIRED.get(request_type, {}))
    written = list(request.to_json())        # bench leaves out the speed options it was not given
    assert written == [f for f in request_type.fields() if f in written]
    assert len(written) >= len(request_type.fields()) - 4


def test_run_json_config_uses_the_decode_field_names(bert_dir):
    r = CliRunner().invoke(main, ["run", "--model", bert_dir, "--json", "--beam-size", "3",
                                  "--no-dedup", "--order", "best-to-worst", "the ___ sat"])
    assert r.exit_code == 0, r.output
    config = json.loads(r.stdout)["config"]
    assert set(config) - {"defaults"} == set(DecodeConfig.fields())   # + the model's defaults used
    assert (config["beam_size"], config["dedup"], config["order"]) == (5, False, "best-to-worst")


def test_sample_json_settings_use_the_sample_field_names(bert_dir):
    r = CliRunner().invoke(main, ["sample", "--model", bert_dir, "--json", "--sweeps", "2",
                                  "--chains", "2", "--sweep-order", "random", "the ___ sat"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)
    fields = set(SampleRequest.fields())
    assert fields - {"max_rows"} <= set(row), sorted(fields - set(row))
    assert (row["sweep_order"], row["sweeps"], row["chains"]) == ("random", 2, 2)
