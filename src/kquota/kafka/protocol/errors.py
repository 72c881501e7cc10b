"""The one exception the wire codec raises."""

from __future__ import annotations


class ProtocolError(Exception):
    """ProtocolError reports bytes (or a body) that do not fit the message spec.

    The text names the message, version and field path, e.g.
    ``DescribeClientQuotasResponse v1: Entries[3].Values[0].Value: truncated (need 8 bytes,
    have 2)``, because "truncated" alone is useless when a broker sends 100k entries.
    ``path`` is that field path ("" when the problem is the message as a whole) and ``reason``
    the bare cause, for callers that want to branch without parsing text.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason or message
