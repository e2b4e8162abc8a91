"""The server's configurable limits, and the errors for requests beyond them."""
from __future__ import annotations

from dataclasses import asdict, dataclass

from infill.errors import ConfigError, InfillError, InputError

__all__ = ["Limits", "ServerBusy", "TooLarge"]


class TooLarge(InputError):
    """A request body or text beyond the server's limits (HTTP 413)."""


class ServerBusy(InfillError):
    """More requests waiting than the server takes at once (HTTP 429); retry later."""


@dataclass(frozen=True)
class Limits:
    """What one ``infill serve`` accepts.

    max_text       -- characters of a request's text (after Leiden conversion)
    max_beam       -- beam size
    max_top_k      -- completions returned
    max_gap        -- tokens per gap marker
    max_positions  -- positions to fill in one text (all its gaps together)
    max_pending    -- requests queued or decoding at once; more are answered 429
    max_batch      -- requests decoded together in one batch (1: no batching)
    batch_wait_ms  -- under load, how long the worker waits for more requests to join a batch
                      (a lone request never waits)
    """

    max_text: int = 2000
    max_beam: int = 50
    max_top_k: int = 20
    max_gap: int = 32
    max_positions: int = 64
    max_pending: int = 64
    max_batch: int = 32
    batch_wait_ms: float = 5.0

    def __post_init__(self):
        for name in ("max_text", "max_beam", "max_top_k", "max_gap", "max_positions", "max_pending",
                     "max_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name.replace('_', '-')} must be an integer >= 1, got {value!r}")
        if not 0 <= self.batch_wait_ms <= 1000:
            raise ConfigError(f"batch-wait-ms must be between 0 and 1000, got {self.batch_wait_ms}")

    @property
    def max_body(self) -> int:
        """Bytes of a request body: the text at 4 bytes a character, JSON escapes and options."""
        return 8 * self.max_text + 16_384

    def to_json(self) -> dict:
        return asdict(self)
