"""Exceptions raised by infill. The CLI turns each into a one-line message and exit code 2."""


class InfillError(Exception):
    """Base class of every error infill raises on purpose."""


class InputError(InfillError, ValueError):
    """The user's input cannot be processed (no gap, too long, invalid residue, ...)."""


class ModelLoadError(InfillError, OSError):
    """A model could not be found or loaded."""


class ConfigError(InfillError, ValueError):
    """Inconsistent options (unknown scorer, beam size < 1, ...)."""
