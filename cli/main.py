"""Entry point: ``infill COMMAND``. Each command lives in its own module of this package
(installed as ``infill_cli``)."""
from __future__ import annotations

import importlib

import click

from . import streams
from infill._version import __version__
from .errors import InfillGroup
from infill.lazy import LazyModule

parallel = LazyModule("infill.parallel")     # the exit under torchrun: after the command

COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("bench:bench", "Benchmark infilling decoders on DATA."),
    "check": ("check:check",
              "Flag doubtful readings: written tokens much less probable than an alternative."),
    "corpus": ("corpus:corpus", "Show where the named corpora are, or rebuild one."),
    "joint": ("joint:joint", "Pairwise joints (MLM, MRF-L, MRF, HCB, AG) derived from a masked LM."),
    "models": ("models:models",
               "List the models that load by name (--model NAME), with their size on disk; with "
               "--model, describe that one model (architecture, alphabet, parameters)."),
    "rescore": ("sample:rescore",
                "Rank complete texts (e.g. the completions of a beam) by energy, lowest first."),
    "run": ("run:run",
            "Fill each gap marker (default ___) in TEXT with --gap tokens and rank the completions."),
    "sample": ("sample:sample", "Sample fills for each gap marker in TEXT by Metropolis\u2013Hastings "
                                "on the model's energy."),
    "serve": ("serve:serve", "Serve the workbench page and the JSON API on HOST:PORT."),
    "train": ("train:train", "Train a FAMILY (english, greek, latin, protein) masked LM on CORPUS."),
}
"""Each command: where it lives (``module:attribute`` in this package) and its one-line help
(the first sentence of its docstring; a test checks they agree). A command's module is imported
only when the command runs or shows its help, so ``infill --help`` imports no library code."""


class LazyGroup(InfillGroup):
    """click's lazy-loading group: :data:`COMMANDS` are imported on first use."""

    def list_commands(self, ctx) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx, name: str):
        if name in self.commands or name not in COMMANDS:
            return super().get_command(ctx, name)
        module, attr = COMMANDS[name][0].split(":")
        command = getattr(importlib.import_module(f"{__package__}.{module}"), attr)
        self.add_command(command, name)
        return command

    def format_commands(self, ctx, formatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(map(len, names))
        rows = []
        for name in names:
            if name in COMMANDS and name not in self.commands:
                summary = click.Command(name, help=COMMANDS[name][1])
                rows.append((name, summary.get_short_help_str(limit)))
            else:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="infill")    # not the distribution's metadata
def main() -> None:
    """Fill gaps in text, inscriptions and proteins with masked language models."""



def cli_entry() -> None:
    """The ``infill`` executable: standard streams made safe (:func:`.streams.prepare`), the
    click group, one note if some characters could not be shown, then an exit that is safe
    under torchrun (:func:`infill.parallel.exit_process`)."""
    streams.prepare()
    try:
        main(prog_name="infill")
        code = 0
    except SystemExit as e:
        if not isinstance(e.code, (int, type(None))):
            raise
        code = e.code or 0
    note = streams.lossy_note()
    if note is not None:
        click.echo(note, err=True)
    parallel.exit_process(code)


if __name__ == "__main__":  # pragma: no cover
    cli_entry()
