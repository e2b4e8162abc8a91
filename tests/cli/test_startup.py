"""Help, option errors and ``import infill`` import neither torch nor transformers (the start-up
cost itself is measured by benchmarks/startup.py, not here: no timed tests)."""
from __future__ import annotations

import subprocess
import sys

import click
import pytest

from infill_cli.main import COMMANDS, main

HEAVY = ("torch", "transformers")
MACHINERY = ("numpy", "pickle", "json", "infill.decoding.scorers", "infill.decoding.orders",
             "infill.decoding.selectors", "infill.decoding.engine", "infill.api", "infill.jobs.sharding",
             "infill.filling.defaults", "infill.jobs.sample", "infill.jobs.rescore")
"""What a command's help needs none of: the options are read off the request types and the
registries' names (infill.config), not the machinery behind them."""

# Runs the CLI in a fresh interpreter, then reports which heavy modules it had imported.
DRIVER = """
import sys
from infill_cli.main import main
try:
    main(sys.argv[1:], prog_name="infill")
except SystemExit as e:
    code = e.code
print("\\nLOADED=" + ",".join(m for m in {heavy!r} if m in sys.modules))
print("EXIT=" + str(code))
"""


def run_fresh(*args: str, heavy: tuple[str, ...] = HEAVY) -> tuple[set[str], int, str, str]:
    proc = subprocess.run([sys.executable, "-c", DRIVER.format(heavy=heavy), *args],
                          capture_output=True, text=True, timeout=120)
    lines = proc.stdout.strip().splitlines()
    loaded = lines[-2].removeprefix("LOADED=")
    code = int(lines[-1].removeprefix("EXIT="))
    return set(filter(None, loaded.split(","))), code, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [("--help",), ("--version",),
                                  *[(name, "--help") for name in COMMANDS]])
def test_help_imports_no_torch(args):
    loaded, code, out, _ = run_fresh(*args)
    assert code == 0
    assert "Usage: infill" in out or "version" in out
    assert loaded == set(), f"infill {' '.join(args)} imported {loaded}"


@pytest.mark.parametrize("name", [*COMMANDS, "run --beam 0 x"])
def test_help_imports_no_machinery(name):
    """The start-up benchmark's help rows stay near `import click` (benchmarks/startup.py)."""
    args = name.split() if " " in name else (name, "--help")
    loaded, code, _, _ = run_fresh(*args, heavy=MACHINERY)
    assert code == (2 if " " in name else 0)
    assert loaded == set(), f"infill {' '.join(args)} imported {loaded}"


@pytest.mark.parametrize("args", [("run", "--beam", "0", "x"), ("sample", "--sweeps", "-1", "x"),
                                  ("bench", "--no-such-option"), ("nosuchcommand",)])
def test_option_errors_import_no_torch(args):
    loaded, code, _, err = run_fresh(*args)
    assert code == 2
    assert err.startswith("Error: ") and len(err.strip().splitlines()) == 1
    assert loaded == set(), f"infill {' '.join(args)} imported {loaded}"


def test_import_infill_is_lazy():
    code = ("import sys, infill; before = [m for m in {h!r} if m in sys.modules]; "
            "names = set(dir(infill)); fill = infill.fill; "
            "print(before, 'fill' in names, 'torch' in sys.modules, fill.__module__)")
    out = subprocess.run([sys.executable, "-c", code.format(h=HEAVY)], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["[]", "True", "True", "infill.api"]


def test_lazy_names_are_the_real_ones():
    import infill
    import infill.api
    import infill.mcmc
    import infill.mcmc.chains
    assert infill.fill is infill.api.fill
    assert infill.mcmc.mh is infill.mcmc.chains.mh
    with pytest.raises(AttributeError):
        infill.no_such_name  # noqa: B018


def test_command_table_matches_the_commands():
    """The group's one-line help of each lazily loaded command is the command's own."""
    ctx = click.Context(main)
    for name, (_, summary) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command.name == name
        assert command.get_short_help_str(limit=10 ** 6) == summary
    assert main.list_commands(ctx) == sorted(COMMANDS)
