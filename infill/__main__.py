"""``python -m infill`` (and ``torchrun --nproc-per-node N infill ...`` from a checkout): the CLI."""
from infill_cli.main import cli_entry

cli_entry()
