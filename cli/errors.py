"""Turn infill's own exceptions into one-line CLI errors with exit code 2, the request fields they
name worded as the command's flags (``'beam_size'`` -> ``--beam-size``)."""
from __future__ import annotations

import functools
import re
import sys
import warnings

import click

from infill.errors import InfillError
from infill.lazy import LazyModule

from . import streams

shlex = LazyModule("shlex")          # an error's hint only: not for --help


class CLIError(click.ClickException):
    """Printed as ``Error: message`` on stderr; exit code 2 (like click's usage errors)."""

    exit_code = 2


def clean_errors(fn):
    """Decorator for commands: InfillError -> CLIError (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning()
            try:
                return fn(*args, **kwargs)
            except InfillError as e:
                raise CLIError(e.worded(flag)) from None

    return wrapper


def flag(field: str) -> str:
    """The flag of a request field: the running command's option of that parameter (its first
    long spelling: ``data_root`` -> ``--data-dir``), else the field's name with dashes
    (``beam_size`` -> ``--beam-size``)."""
    ctx = click.get_current_context(silent=True)
    for param in ctx.command.params if ctx is not None else ():
        if param.name == field and isinstance(param, click.Option):
            long = [o for o in param.opts if o.startswith("--")]
            if long:
                return long[0]
    return "--" + field.replace("_", "-")


def _one_line_warning():
    """A ``warnings.showwarning`` that prints each distinct warning once, as ``Warning: text``
    (no file name and source line: they mean nothing to a user of the command)."""
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = (str(message).strip().splitlines() or [category.__name__])[0]
        if text not in seen:
            seen.add(text)
            click.echo(f"Warning: {text}", err=True)

    return show


def dash_text_hint(e: click.UsageError, args=None) -> str:
    """For an unknown "option" that cannot be one (``- - -ος``, ``-ος``, ``---``: a Leiden text
    starting with a lost stretch), a hint that such a text goes after ``--``; else ""."""
    name = getattr(e, "option_name", None)
    if not isinstance(e, click.NoSuchOption) or re.fullmatch(r"--?[A-Za-z0-9][A-Za-z0-9-]*", name):
        return ""
    given = sys.argv[1:] if args is None else args
    text = next((a for a in given if isinstance(a, str) and a.startswith(name)), name)
    cmd = e.ctx.command_path if e.ctx is not None else "infill"
    return f" (a text that starts with '-' goes after --: {cmd} -- {shlex.quote(text)})"


class OneLineErrors:
    """Every error ends as one line on stderr and exit code 2 -- usage errors too (click's
    default prints the usage block first), output that cannot be written too (a full disk, a
    closed stdout: :mod:`.streams`); a closed pipe (``| head``) ends quietly (exit 0)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            streams.flush_stdout()      # a write that fails fails here, not at exit
        except click.UsageError as e:
            cmd = e.ctx.command_path if e.ctx is not None else "infill"
            click.echo(f"Error: {e.format_message()}{dash_text_hint(e, args)} (see '{cmd} --help')",
                       err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            e.show()
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except (BrokenPipeError, streams.PipeClosed):
            streams.discard_stdout()    # the reader went away: nothing more to say
            sys.exit(0)
        except OSError as e:
            message = streams.write_error(e)
            if message is None:
                raise
            streams.discard_stdout()
            click.echo(f"Error: {message}", err=True)
            sys.exit(2)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx):
        """click's invoke; a closed pipe passes click's own handling (exit 1) as
        :class:`~.streams.PipeClosed`, to end quietly in :meth:`main`."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise streams.PipeClosed() from e


class InfillCommand(OneLineErrors, click.Command):
    """A command whose errors are one line (see :class:`OneLineErrors`)."""


class InfillGroup(OneLineErrors, click.Group):
    """The ``infill`` group; its subcommands are :class:`InfillCommand` by default."""

    command_class = InfillCommand
