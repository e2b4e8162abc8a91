"""Exceptions and warnings raised by infill. The CLI turns each error into a one-line message and
exit code 2. Kept free of imports: every layer may raise these."""


class InfillError(Exception):
    """Base class of every error infill raises on purpose.

    Besides the message, an error may say where it lies, for front ends to word: ``field`` (the
    request field -- API keyword and JSON name -- at fault), ``input`` (which input: its index or
    id), ``path`` and ``line`` (a file and a 1-based line in it)."""

    def __init__(self, *args, field: str | None = None, input=None, path=None,
                 line: int | None = None):
        super().__init__(*args)
        self.field, self.input, self.path, self.line = field, input, path, line

    def __reduce__(self):           # keeps the fields across processes (torchrun gathers)
        return (_rebuild, (type(self), self.args, self.where()))

    def where(self) -> dict:
        """The structured fields that are set."""
        return {k: v for k, v in (("field", self.field), ("input", self.input),
                                  ("path", self.path), ("line", self.line)) if v is not None}


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


class MetricUnavailable(UserWarning):
    """A benchmark metric was left out (its scorer could not be loaded); the rest is computed."""
