"""Exceptions and warnings raised by infill. The CLI turns each error into a one-line message and
exit code 2. Kept free of infill imports: every layer may raise these."""
import re


class InfillError(Exception):
    """Base class of every error infill raises on purpose.

    Besides the message, an error may say where it lies, for front ends to word: ``field`` (the
    request field -- API keyword and JSON name -- at fault; a tuple when it names several),
    ``input`` (which input: its index or id), ``path`` and ``line`` (a file and a 1-based line
    in it). A message quotes the fields it names in the API's words (``'beam_size'``); a front
    end rewords them (:meth:`worded`): the CLI as its flags (``--beam-size``)."""

    def __init__(self, *args, field: str | tuple[str, ...] | None = None, input=None, path=None,
                 line: int | None = None):
        super().__init__(*args)
        self.field, self.input, self.path, self.line = field, input, path, line

    def __reduce__(self):           # keeps the fields across processes (torchrun gathers)
        return (_rebuild, (type(self), self.args, self.where()))

    def fields(self) -> tuple[str, ...]:
        """The request fields the error names (``field``: none, one or several)."""
        f = self.field
        return () if f is None else (f,) if isinstance(f, str) else tuple(f)

    def message(self) -> str:
        """The first line of the message (the class name when there is none)."""
        text = str(self)
        return text.splitlines()[0] if text else type(self).__name__

    def worded(self, name) -> str:
        """:meth:`message` with the fields it names (:attr:`field`) and quotes (``'beam_size'``)
        in a front end's words: ``name(field)`` (the CLI's ``--beam-size``). Other quoted words
        (values, a file's keys) stay as they are."""
        own = set(self.fields())
        return _QUOTED.sub(lambda m: name(m[1]) if m[1] in own else m[0], self.message())

    def where(self) -> dict:
        """The structured fields that are set."""
        return {k: v for k, v in (("field", self.field), ("input", self.input),
                                  ("path", self.path), ("line", self.line)) if v is not None}


_QUOTED = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)'")
"""A quoted identifier in a message: a field's name when the error names that field."""


def _rebuild(cls, args, where):
    return cls(*args, **where)


class InputError(InfillError, ValueError):
    """The user's input cannot be processed (no gap, too long, invalid residue, ...)."""


class ModelLoadError(InfillError, OSError):
    """A model could not be found or loaded."""


class ConfigError(InfillError, ValueError):
    """Inconsistent options (unknown scorer, beam size < 1, ...)."""


class LongInputWarning(UserWarning):
    """Some input exceeded the model's maximum length and was decoded in context windows."""


WINDOWED = "longer than the model's maximum length"
"""How the note of an input read in context windows begins (a front end that says it once for
all inputs may skip it per input)."""


class MetricUnavailable(UserWarning):
    """A benchmark metric was left out (its scorer could not be loaded); the rest is computed."""
