"""infill.jobs: each command's job as one library function whose results write the command's JSON.

The library's JSON is compared with what the command prints for the same input (through click's
runner and the real loaders), errors are checked to name their input, and the commands' options
are checked against the request types they build."""
from __future__ import annotations

import dataclasses
import json

import click
import pytest
from click.testing import CliRunner

import infill
from infill.errors import InputError
from infill.jobs import FillRequest, JointRequest, fill_inputs, pair_joints, sample_inputs
from infill.jobs.inputs import Input, read_leiden, reads_leiden
from infill.parallel import Shard
from infill.requests import SampleRequest
from infill.jobs.sharding import in_rounds
from infill_cli.main import main

TEXTS = ["the ___ sat on the mat.", "no gap in this line", "a ___ and a ___ went out."]


@pytest.fixture(scope="module")
def inputs_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("jobs") / "inputs.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return str(path)


def json_lines(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def as_json(obj: dict) -> dict:
    """``obj`` as its JSON line reads back (tuples become lists)."""
    return json.loads(json.dumps(obj, ensure_ascii=False, allow_nan=False))


def test_fill_job_writes_the_json_of_infill_run(bert_dir, inputs_file):
    r = CliRunner().invoke(main, ["run", "-m", bert_dir, "--json", "-k", "2", "--batch-size", "2",
                                  "-i", inputs_file])
    assert r.exit_code == 2 and "1 of 3 input(s) could not be filled" in r.stderr
    lm = infill.load_model(bert_dir)
    job = fill_inputs(lm, TEXTS, FillRequest(top_k=2, batch_size=2), name=bert_dir)
    assert [len(b) for b in job.batches()] == [1, 2]          # the first answer streams out alone
    fills = list(job)
    assert [as_json(f.to_json()) for f in fills] == json_lines(r)
    assert [f.id for f in fills] == ["1", "2", "3"] and len(fills[0].completions) == 2


def test_the_first_answer_comes_after_one_inputs_decode(bert_dir, monkeypatch):
    """A long job (the antibody FASTA example: batches of 32) shows its first answer after one
    input's decode, then goes on in full batches."""
    import infill.filling.planner
    calls = []
    real = infill.filling.planner.fill_resolved
    monkeypatch.setattr(infill.filling.planner, "fill_resolved",
                        lambda m, texts, *a, **k: calls.append(len(texts)) or real(m, texts, *a, **k))
    lm = infill.load_model(bert_dir)
    job = iter(fill_inputs(lm, ["the ___ sat"] * 7, FillRequest(top_k=1, batch_size=4)))
    first = next(job)
    assert first.completions and calls == [1]
    assert len(list(job)) == 6 and calls == [1, 4, 2]


def test_fill_job_errors_name_their_input(bert_dir):
    lm = infill.load_model(bert_dir)
    fills = list(fill_inputs(lm, [Input("a", "the ___ sat"), Input("b", "no gap"),
                                  Input("c", None, error="FASTA record 'c' has no sequence")],
                             top_k=1))
    assert fills[0].error is None and fills[0].failure() is None
    for f, expected in zip(fills[1:], ["b", "c"]):
        err = f.failure()
        assert isinstance(err, InputError) and err.input == expected
        assert err.message() == f.error and f.to_json()["error"] == f.error
    assert fills[1].error.startswith("no gap marker '___'")
    assert fills[2].to_json()["completions"] == [] and fills[2].to_json()["input"] is None


def test_leiden_is_read_by_the_models_unit(bert_dir, greek_char_dir):
    greek, text_model = infill.load_model(greek_char_dir), infill.load_model(bert_dir)
    assert reads_leiden(greek) and not reads_leiden(text_model)
    read = read_leiden([Input("1", "καὶ [c.3] τὸν"), Input("2", "bad [c.x siglum")], "___", 1)
    assert read[0].text == "καὶ ___ τὸν" and read[0].gap == [(2, 4)]
    assert read[1].text is None and read[1].error.startswith("malformed Leiden sigla")
    fills = list(fill_inputs(greek, ["καὶ [c.3] τὸν", "bad [c.x siglum"], top_k=2))
    assert fills[0].gap == [(2, 4)] and as_json(fills[0].to_json())["gap"] == [[2, 4]]
    assert fills[1].failure().input == "2" and fills[1].error == read[1].error
    # a text model leaves the brackets alone: they are text, and ___ its gap
    (f,) = fill_inputs(text_model, ["the [c.3] ___ sat"], top_k=1)
    assert f.error is None and f.input.text == "the [c.3] ___ sat" and f.gap == 1


def test_fill_job_json_matches_run_for_leiden_lacunae(greek_char_dir):
    text = "καὶ [c.3] τὸν"
    r = CliRunner().invoke(main, ["run", "-m", greek_char_dir, "--json", "-k", "3", text])
    assert r.exit_code == 0, r.output
    lm = infill.load_model(greek_char_dir)
    (f,) = fill_inputs(lm, [text], top_k=3, name=greek_char_dir)
    assert [as_json(f.to_json())] == json_lines(r)
    assert "decoded at every length from 2 to 4" in " ".join(f.result.notes)


def test_joint_job_writes_the_json_of_infill_joint(bert_dir):
    text = "the ___ ___ on the mat."
    r = CliRunner().invoke(main, ["joint", "-m", bert_dir, "--json", "--joint-size", "4",
                                  "--ag-iterations", "3", "-k", "2", text])
    assert r.exit_code == 0, r.output
    lm = infill.load_model(bert_dir)
    res = pair_joints(lm, text, JointRequest(joint_size=4, ag_iterations=3, top_k=2), name=bert_dir)
    assert [as_json(res.to_json())] == json_lines(r)
    assert res.grid == (4, 4) and all(len(rows) == 2 for rows in res.joints.values())
    with pytest.raises(InputError, match="exactly two gap tokens"):
        pair_joints(lm, "the ___ sat", joint_size=4)


def test_sample_job_writes_the_json_of_infill_sample(bert_dir, inputs_file):
    r = CliRunner().invoke(main, ["sample", "-m", bert_dir, "--json", "--sweeps", "2",
                                  "--chains", "2", "-k", "3", "-i", inputs_file])
    assert r.exit_code == 2 and "1 of 3 input(s) could not be sampled" in r.stderr
    lm = infill.load_model(bert_dir)
    samples = sample_inputs(lm, TEXTS, SampleRequest(sweeps=2, chains=2), name=bert_dir)
    assert [as_json(s.to_json(3)) for s in samples] == json_lines(r)
    assert samples[1].failure().input == "2" and samples[0].failure() is None


@dataclasses.dataclass(frozen=True)
class TwoRanks(Shard):
    """Rank ``rank`` of two in one process: rank 0's gather reads what rank 1 left on the board."""
    board: dict = dataclasses.field(default_factory=dict, compare=False)

    def gather(self, obj):
        self.board.setdefault(self.rank, []).append(obj)
        return [obj, self.board[1][len(self.board[0]) - 1]] if self.main else None


def test_in_rounds_yields_each_round_in_input_order_on_rank_0():
    board, seen = {}, []

    def fn(x):
        seen.append(x)
        return x * 10

    assert list(in_rounds([1, 2, 3, 4, 5], fn, TwoRanks(1, 2, board=board))) == []
    assert seen == [2, 4]
    assert list(in_rounds([1, 2, 3, 4, 5], fn, TwoRanks(0, 2, board=board))) == [10, 20, 30, 40,
                                                                                   50]
    assert seen == [2, 4, 1, 3, 5]
    assert list(in_rounds([1, 2, 3], fn, Shard())) == [10, 20, 30]


def command(name: str) -> click.Command:
    return main.get_command(click.Context(main), name)


@pytest.mark.parametrize("name, request_type, own", [
    ("run", FillRequest, {"top_k", "gap", "marker", "length_score", "region", "batch_size"}),
    ("joint", JointRequest, {"data", "split", "pair_scheme", "joint_size", "ag_iterations",
                             "converged_tol", "seed", "pairs_per_text", "min_tokens", "top_k",
                             "gap", "marker", "batch_size", "allow_special"}),
])
def test_command_options_are_the_request_fields(name, request_type, own):
    """Each option of the command that sets a field is made from it: flag, default, help, choices."""
    fields = request_type.fields()
    made = {}
    for opt in command(name).params:
        if isinstance(opt, click.Option) and opt.name in own:
            rules = request_type.rules(opt.name)
            assert f"--{opt.name.replace('_', '-')}" in opt.opts, opt.opts
            assert opt.help.startswith(rules.help) and opt.default == fields[opt.name].default
            if rules.choices is not None:
                assert list(opt.type.choices) == list(rules.names())
            made[opt.name] = opt
    assert set(made) == own
