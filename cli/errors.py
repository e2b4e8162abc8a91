"""Turn infill's own exceptions into one-line CLI errors with exit code 2."""
from __future__ import annotations

import functools

import click

from infill.errors import InfillError


class CLIError(click.ClickException):
    """Printed as ``Error: message`` on stderr; exit code 2 (like click's usage errors)."""

    exit_code = 2


def clean_errors(fn):
    """Decorator for commands: InfillError -> CLIError (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InfillError as e:
            raise CLIError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None

    return wrapper
