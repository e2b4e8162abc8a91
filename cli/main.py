"""Entry point: ``infill COMMAND``. Each command lives in its own module of this package."""
from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="infill")
def main() -> None:
    """Fill gaps in text, inscriptions and proteins with masked language models."""


def _register() -> None:
    from cli.bench import bench
    main.add_command(bench)
    from cli.train import train
    main.add_command(train)
    from cli.models import models
    main.add_command(models)
    from cli.run import run
    main.add_command(run)
    from cli.joint import joint
    main.add_command(joint)
    from cli.sample import rescore, sample
    main.add_command(sample)
    main.add_command(rescore)


_register()

if __name__ == "__main__":  # pragma: no cover
    main()
