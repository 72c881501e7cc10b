"""Signed audit events: an HMAC-SHA256 over each event's canonical form. Pure, no I/O.

Anyone who may produce to the audit topic can write a record that looks like kquota's, so
``revert`` and ``history`` trust an event only when its MAC verifies with a key kquota.yaml
holds (``audit_signing``, each key from the environment through ``${VAR}``).

Decisions:

- The MAC is over the event's canonical JSON (sorted keys, ``,``/``:`` separators, UTF-8,
  no NaN), recomputed from the value as parsed: what is verified is exactly what is read,
  whatever spacing or key order the bytes on the wire have, and a value with a key twice
  (JSON's last one wins) verifies only as what the reader keeps. The canonical form carries
  the cluster, cluster id, plan id, entity, ops, actor and timestamp; the record's partition
  and offset are not in it, so a copied or re-partitioned topic still verifies.
- The MAC and the id of the key that made it travel in record headers (KIP-82),
  ``kquota-key-id`` and ``kquota-signature`` (lower-case hex): the value stays the JSON
  contract other consumers read, unchanged.
- Several keys may be configured, one of them signing: a key is rotated by adding the new
  one, signing with it, and removing the old one once its events no longer need reverting.
- A key has at least :data:`MIN_KEY_BYTES` bytes: a short one could be guessed offline from
  any one record.
- A domain prefix goes before the canonical form, so a MAC made for an audit event cannot
  be replayed as any other kquota MAC made with the same key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

KEY_ID_HEADER = "kquota-key-id"
SIGNATURE_HEADER = "kquota-signature"
MIN_KEY_BYTES = 32
"""The shortest key accepted: 256 bits, HMAC-SHA256's own strength."""

MAX_KEY_BYTES = 4096
KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""What a key id may be: it is shown in messages and travels in a header."""

_DOMAIN = b"kquota.audit.v1\n"


class Verdict(Enum):
    """Verdict is what a record's signature says about it."""

    VERIFIED = "verified"
    UNSIGNED = "unsigned"
    UNKNOWN_KEY = "unknown key"
    BAD_SIGNATURE = "bad signature"

    @property
    def trusted(self) -> bool:
        return self is Verdict.VERIFIED


def canonical(payload: Mapping[str, Any]) -> bytes:
    """canonical is the event's bytes the MAC covers (raises ValueError on NaN/inf)."""
    text = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return _DOMAIN + text.encode()


def key_problem(key_id: str, key: str) -> str | None:
    """key_problem is why ``key`` cannot sign (too short, too long), or None. The message
    names the key id, never the key."""
    size = len(key.encode())
    if size < MIN_KEY_BYTES:
        return (
            f"audit signing key {key_id!r} is {size} bytes long; at least {MIN_KEY_BYTES} "
            "are needed (e.g. openssl rand -hex 32)"
        )
    if size > MAX_KEY_BYTES:
        return f"audit signing key {key_id!r} is {size} bytes long; at most {MAX_KEY_BYTES}"
    return None


@dataclass(frozen=True)
class AuditKeys:
    """AuditKeys are the keys an audit trail is verified with, and the id of the one that
    signs new events. Never printed: ``repr`` shows the ids only."""

    signing: str
    keys: Mapping[str, bytes] = field(repr=False)

    def __post_init__(self) -> None:
        if self.signing not in self.keys:
            raise ValueError(f"the signing key id {self.signing!r} is not among the keys")

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(sorted(self.keys))

    def _mac(self, key: bytes, payload: Mapping[str, Any]) -> str:
        return hmac.new(key, canonical(payload), hashlib.sha256).hexdigest()

    def headers(self, payload: Mapping[str, Any]) -> list[tuple[str, bytes]]:
        """headers are the two record headers that sign ``payload``."""
        mac = self._mac(self.keys[self.signing], payload)
        return [(KEY_ID_HEADER, self.signing.encode()), (SIGNATURE_HEADER, mac.encode())]

    def verify(self, payload: Mapping[str, Any], headers: Sequence[tuple[str, Any]]) -> Verdict:
        """verify checks the signature headers of a record against ``payload`` as parsed."""
        key_id, signature = signature_headers(headers)
        if key_id is None and signature is None:
            return Verdict.UNSIGNED
        if key_id is None or signature is None:
            return Verdict.BAD_SIGNATURE
        key = self.keys.get(key_id)
        if key is None:
            return Verdict.UNKNOWN_KEY
        try:
            expected = self._mac(key, payload)
        except ValueError:
            return Verdict.BAD_SIGNATURE
        return (
            Verdict.VERIFIED if hmac.compare_digest(expected, signature) else Verdict.BAD_SIGNATURE
        )


def signature_headers(headers: Sequence[tuple[str, Any]]) -> tuple[str | None, str | None]:
    """signature_headers are a record's key id and MAC, each None when absent, unreadable or
    given twice (a second header must not choose which one is checked)."""
    found: dict[str, list[object]] = {KEY_ID_HEADER: [], SIGNATURE_HEADER: []}
    for name, value in headers:
        if name in found:
            found[name].append(value)
    return _one(found[KEY_ID_HEADER]), _one(found[SIGNATURE_HEADER])


def _one(values: list[object]) -> str | None:
    if len(values) != 1 or not isinstance(values[0], bytes) or len(values[0]) > 128:
        return None
    try:
        return values[0].decode("ascii")
    except UnicodeDecodeError:
        return None


def header_key_id(headers: Sequence[tuple[str, Any]]) -> str | None:
    """header_key_id is the key id a record names, for messages (None: unsigned or garbled)."""
    key_id = signature_headers(headers)[0]
    return key_id if key_id is not None and KEY_ID.fullmatch(key_id) else None
