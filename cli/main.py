"""Entry point: ``infill COMMAND``. Each command lives in its own module of this package
(installed as ``infill_cli``)."""
from __future__ import annotations

import click

from .bench import bench
from .errors import InfillGroup
from .joint import joint
from .models import models
from .run import run
from .sample import rescore, sample
from .serve import serve
from .train import train


@click.group(cls=InfillGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="infill")
def main() -> None:
    """Fill gaps in text, inscriptions and proteins with masked language models."""


for command in (run, bench, joint, sample, rescore, train, models, serve):
    main.add_command(command)


def cli_entry() -> None:
    """The ``infill`` executable: the click group, then an exit that is safe under torchrun
    (:func:`infill.parallel.exit_process`)."""
    from infill.parallel import exit_process
    try:
        main(prog_name="infill")
        code = 0
    except SystemExit as e:
        if not isinstance(e.code, (int, type(None))):
            raise
        code = e.code or 0
    exit_process(code)


if __name__ == "__main__":  # pragma: no cover
    cli_entry()
