"""How a command that reads many inputs ends, under torchrun or alone: every rank learns whether
any input failed; rank 0 says how many and every rank exits 2 (a command's one exit code rule)."""
from __future__ import annotations

from .errors import CLIError

__all__ = ["closing", "finish"]


def finish(shard, failed: int | None, total: int, noun: str = "input",
           verb: str = "filled") -> None:
    """End the command: ``failed`` is rank 0's count of the inputs that failed (any value on the
    other ranks: rank 0's is broadcast). None or 0 ends normally; otherwise rank 0 raises the
    one-line error (exit 2) and the other ranks exit 2 quietly."""
    failed = shard.broadcast(failed if shard.main else None)
    if not failed:
        return
    if not shard.main:
        raise SystemExit(2)
    closing(failed, total, noun, verb)


def closing(failed: int, total: int, noun: str = "input", verb: str = "filled") -> None:
    """Exit 2 after ``failed`` of ``total`` inputs failed, each already reported on its own
    ``Error:`` line: with several inputs one closing line counts them; with one, its own line
    is the only one (never two ``Error:`` lines for one failed input)."""
    if total <= 1:
        raise SystemExit(2)
    raise CLIError(f"{failed} of {total} {noun}(s) could not be {verb} (see above)")
