"""The server's configurable limits, and the errors for requests beyond them."""
from __future__ import annotations

from infill.errors import InfillError, InputError
from infill.requests import ServeLimits

__all__ = ["ClientGone", "Limits", "QueueTimeout", "ServerBusy", "TooLarge"]


class TooLarge(InputError):
    """A request body or text beyond the server's limits (HTTP 413)."""


class ServerBusy(InfillError):
    """More requests waiting than the server takes at once (HTTP 429); retry later."""


class QueueTimeout(ServerBusy):
    """A request waited in the queue past ``max_wait_s`` (HTTP 503); retry later."""


class ClientGone(InfillError):
    """The client closed its connection before its answer (logged as one line; nothing is
    sent: HTTP 499 in the log's terms)."""


Limits = ServeLimits
"""What one ``infill serve`` accepts (:class:`infill.requests.ServeLimits`): ``max_text``
characters of a request's text (after Leiden conversion), ``max_beam``, ``max_top_k``,
``max_gap`` tokens per gap marker, ``max_positions`` to fill in one text, ``max_pending``
requests queued or decoding at once (more are answered 429), ``max_batch`` requests decoded
together, ``batch_wait_ms`` a batch waits for more under load (a lone request never waits),
``max_wait_s`` a request may wait in the queue before it is answered 503 (:class:`QueueTimeout`)."""
