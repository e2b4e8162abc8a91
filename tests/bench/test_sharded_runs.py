"""Runs sharded over 2 CPU processes with torchrun (gloo) give the single-process results."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TEXTS = ["the cat sat on the mat", "the dog sat on the cat", "on the mat the cat sat",
         "the mat sat on the dog", "the cat on the mat", "dog sat on the mat",
         "the cat sat", "the dog sat on the mat and the cat"]


def torchrun(args: list[str], cwd: Path, nproc: int = 2) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", INFILL_DIST_BACKEND="gloo")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           f"--nproc-per-node={nproc}", "-m", "infill_cli.main", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def single(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The single-process run, in this process (click's runner, one torch thread as each rank
    has): what a process of its own would print, without paying a second interpreter's start."""
    import contextlib

    import torch
    from click.testing import CliRunner

    from infill_cli.main import main

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with contextlib.chdir(cwd):
            r = CliRunner().invoke(main, args)
    finally:
        torch.set_num_threads(threads)
    return subprocess.CompletedProcess(args, r.exit_code, r.stdout, r.stderr)


def rows(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        r.pop("seconds")                     # wall time differs, everything else must not
        out.append(r)
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("shard")
    (d / "data.txt").write_text("\n".join(TEXTS) + "\n")
    return d


@pytest.mark.slow
def test_bench_sharded_over_two_processes_equals_one(bert_dir, data):
    args = ["bench", str(data / "data.txt"), "-m", bert_dir, "--methods", "hcb-l2r,pure",
            "--gap-lengths", "1,2", "--batch-size", "3", "--no-progress", "--device", "cpu"]
    one = single(args + ["--out", str(data / "one")], data)
    assert one.returncode == 0, one.stderr
    two = torchrun(args + ["--out", str(data / "two")], data)
    assert two.returncode == 0, two.stderr
    assert rows(data / "two" / "results.jsonl") == rows(data / "one" / "results.jsonl")
    assert not list((data / "two").glob("results.rank*.jsonl"))       # merged by rank 0
    s1 = json.loads((data / "one" / "summary.json").read_text())
    s2 = json.loads((data / "two" / "summary.json").read_text())
    strip = [{k: v for k, v in c.items() if k != "examples_per_s"} for c in s1["cells"]]
    assert strip == [{k: v for k, v in c.items() if k != "examples_per_s"} for c in s2["cells"]]
    # rank 0 alone printed the table
    assert two.stdout.count("rows; examples used per gap length") == 1


RESUME_ARGS = ["--methods", "hcb-l2r", "--gap-lengths", "1,2", "--batch-size", "2", "--no-progress",
               "--device", "cpu"]


@pytest.fixture(scope="module")
def reference(bert_dir, data):
    """An uninterrupted single-process run: its folder, and the lines of its results.jsonl."""
    out = data / "reference"
    res = single(["bench", str(data / "data.txt"), "-m", bert_dir, *RESUME_ARGS, "--out", str(out)],
                 data)
    assert res.returncode == 0, res.stderr
    return out, (out / "results.jsonl").read_text().splitlines()


def _interrupted(out: Path, ref: Path, files: dict[str, str]) -> None:
    out.mkdir(parents=True)
    (out / "config.json").write_text((ref / "config.json").read_text())
    for name, text in files.items():
        (out / name).write_text(text)


@pytest.mark.slow
@pytest.mark.parametrize("before,nproc", [(1, 2), (2, 3)])
def test_interrupted_bench_resumes_without_loss_or_duplicates(bert_dir, data, reference, before,
                                                              nproc):
    """An interrupted run of ``before`` processes, resumed with ``nproc``: the rows of an
    uninterrupted single-process run, and no per-rank file left."""
    ref, keep = reference
    out = data / f"resumed{before}to{nproc}"
    if before == 1:      # results.jsonl with some rows and a half-written line
        files = {"results.jsonl": "\n".join(keep[:5]) + "\n" + keep[5][:20]}
    else:                # as if two ranks died mid-run: each kept part of its rows, one with a
        files = {"results.rank0.jsonl": "\n".join(keep[:3]) + "\n",   # half-written line
                 "results.rank1.jsonl": "\n".join(keep[5:7]) + "\n" + keep[7][:20]}
    _interrupted(out, ref, files)
    again = torchrun(["bench", str(data / "data.txt"), "-m", bert_dir, *RESUME_ARGS, "--out",
                      str(out)], data, nproc=nproc)
    assert again.returncode == 0, again.stderr
    assert rows(out / "results.jsonl") == rows(ref / "results.jsonl")
    assert not list(out.glob("results.rank*.jsonl"))
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] and s["counts"]["rows"] == len(keep)


NODE = """import os, sys
os.chdir(os.path.join(sys.argv.pop(1), "node" + os.environ["RANK"]))
from infill_cli.main import cli_entry
cli_entry()
"""
"""A rank on its own machine: the ``infill`` executable's entry point run in its own folder (its
torchrun-safe exit included: the bare click group would leave the group's threads to the
interpreter's teardown, which can abort a rank after its work is done)."""


@pytest.mark.slow
def test_bench_on_machines_without_a_shared_out_folder(bert_dir, data, reference):
    """Each rank in its own folder (as on machines that do not share --out): rank 0 gets the other
    ranks' rows -- those left by an interrupted run on their disk and those they compute --
    over torch.distributed, and its results.jsonl is the single-process one."""
    ref, keep = reference
    root = data / "nodes"
    _interrupted(root / "node0" / "out", ref, {"results.rank0.jsonl": "\n".join(keep[:2]) + "\n"})
    # rows only rank 1's machine has (one written by a rank 2 of a 3-process run)
    _interrupted(root / "node1" / "out", ref,
                 {"results.rank1.jsonl": "\n".join(keep[3:5]) + "\n",
                  "results.rank2.jsonl": keep[8] + "\n" + keep[9][:10]})
    script = data / "node.py"
    script.write_text(NODE)
    env = dict(os.environ, OMP_NUM_THREADS="1", INFILL_DIST_BACKEND="gloo")
    res = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                          "--nproc-per-node=2", str(script), str(root), "bench",
                          str(data / "data.txt"), "-m", bert_dir, *RESUME_ARGS, "--out", "out"],
                         cwd=data, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert rows(root / "node0" / "out" / "results.jsonl") == rows(ref / "results.jsonl")
    assert not (root / "node1" / "out" / "results.jsonl").exists()
    for node in ("node0", "node1"):
        assert not list((root / node / "out").glob("results.rank*.jsonl"))


@pytest.mark.slow
def test_run_input_sharded_prints_the_single_process_output(bert_dir, data):
    f = data / "inputs.txt"
    f.write_text("\n".join(t.replace("the", "___", 1) for t in TEXTS) + "\n")
    args = ["run", "-m", bert_dir, "--input", str(f), "--json", "-k", "2", "--batch-size", "2",
            "--device", "cpu"]
    one = single(args, data)
    two = torchrun(args, data)
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert two.stdout == one.stdout


@pytest.mark.parametrize("command", [
    ["sample", "--json", "--sweeps", "2", "--chains", "2", "--gap", "2"],
    ["rescore", "--json"],
    ["joint", "--json", "--iterations", "5", "--joint-size", "4", "-n", "6", "--no-progress"],
])
@pytest.mark.slow
def test_sample_rescore_joint_sharded_print_the_single_process_output(bert_dir, data, command):
    f = data / ("texts.txt" if command[0] != "sample" else "gapped.txt")
    lines = TEXTS if command[0] != "sample" else [t.replace("the", "___", 1) for t in TEXTS[:4]]
    f.write_text("\n".join(lines) + "\n")
    source = ["--data", str(f)] if command[0] == "joint" else ["--input", str(f)]
    args = [command[0], "-m", bert_dir, "--device", "cpu", *source, *command[1:]]
    one = single(args, data)
    two = torchrun(args, data)
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert two.stdout == one.stdout
