"""The server's configurable limits, and the errors for requests beyond them."""
from __future__ import annotations

from infill.errors import InfillError, InputError
from infill.requests import ServeLimits

__all__ = ["Limits", "ServerBusy", "TooLarge"]


class TooLarge(InputError):
    """A request body or text beyond the server's limits (HTTP 413)."""


class ServerBusy(InfillError):
    """More requests waiting than the server takes at once (HTTP 429); retry later."""


Limits = ServeLimits
"""What one ``infill serve`` accepts (:class:`infill.requests.ServeLimits`): ``max_text``
characters of a request's text (after Leiden conversion), ``max_beam``, ``max_top_k``,
``max_gap`` tokens per gap marker, ``max_positions`` to fill in one text, ``max_pending``
requests queued or decoding at once (more are answered 429), ``max_batch`` requests decoded
together, ``batch_wait_ms`` a batch waits for more under load (a lone request never waits)."""
