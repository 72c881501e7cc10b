"""AlterClientQuotas answers no broker sends, from a fake (:func:`fake_listener.fake_broker`):
a real broker answers each entity sent once and cannot be made to do otherwise on demand.

An answer that does not answer each entity sent exactly once (an entry short or too many, an
entity the request did not name, one answered twice with an error behind an acceptance,
bytes cut short) is refused whole, as a malformed response: a connection error, which the
applier settles by reading the cluster (kquota.operations.apply.connection_errors). No entity
of it is ever reported accepted, neither by the validate-only pass nor by the commit, and
whether the all-accepted reading (kquota.kafka.quotawire.AlterExchange) or the full one read it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from fake_listener import Header, fake_broker, fake_frame
from kquota.kafka.admin import AsyncWireAdmin, QuotaAlteration, QuotaOp
from kquota.kafka.config import ClientConfig
from kquota.kafka.errors import BrokerConnectionError
from kquota.kafka.protocol import encode_response
from kquota.model import Entity
from quota_answers import alter_answer, alter_entry

A, B, AX = {"user": "a"}, {"user": "b"}, {"user": "a", "client-id": "x"}
STRANGER = {"user": "z"}
ONE_PART = [A, B, {"user": "c"}]
TWO_PARTS = [A, B, AX]
Sent = list[dict[str, str]]
Payload = Callable[[Header, Sent], bytes]


def _entry(parts: dict[str, str], code: int = 0, message: str | None = None) -> dict[str, Any]:
    return alter_entry(parts.items(), code, message)


def _answer(header: Header, entries: list[dict[str, Any]]) -> bytes:
    """_answer is the response frame's payload (header included) for ``entries``."""
    return encode_response(
        header["RequestApiKey"],
        header["RequestApiVersion"],
        header["CorrelationId"],
        alter_answer(entries),
    )


def _truncated(header: Header, sent: Sent) -> bytes:
    return _answer(header, [_entry(p) for p in sent])[:-4]


def _count_lies(header: Header, sent: Sent) -> bytes:
    # Entries' compact length (count + 1) says one entry more than follows.
    payload = bytearray(_answer(header, [_entry(p) for p in sent]))
    at = payload.index(bytes([len(sent) + 1]), 9)
    payload[at] += 1
    return bytes(payload)


def _past_the_count(header: Header, sent: Sent) -> bytes:
    # A whole entry with an error after the last one the count announces, before the tags.
    entries = _answer(header, [_entry(p) for p in sent])
    extra = _answer(header, [_entry(sent[0], 42, "hidden")])
    return entries[:-1] + extra[10:-1] + b"\x00"


def _entries(make: Callable[[Sent], list[dict[str, Any]]]) -> Payload:
    return lambda header, sent: _answer(header, make(sent))


TAIL = "; none of the request's entities is taken as answered"
ANSWERS: dict[str, tuple[Payload, str]] = {
    "an entry short": (
        _entries(lambda sent: [_entry(p) for p in sent[:-1]]),
        f"AlterClientQuotas answered 2 entities for the 3 sent{TAIL}",
    ),
    "an entry too many": (
        _entries(lambda sent: [*(_entry(p) for p in sent), _entry(STRANGER)]),
        f"AlterClientQuotas answered {{user=z}}, which the request did not send{TAIL}",
    ),
    "an entity not sent": (
        _entries(lambda sent: [*(_entry(p) for p in sent[:-1]), _entry(STRANGER)]),
        f"AlterClientQuotas answered {{user=z}}, which the request did not send{TAIL}",
    ),
    "an error behind an acceptance": (
        _entries(lambda sent: [*(_entry(p) for p in sent), _entry(sent[0], 42, "nope")]),
        f"AlterClientQuotas answered {{user=a}} twice{TAIL}",
    ),
    "an acceptance behind an error": (
        _entries(
            lambda sent: [
                _entry(sent[0], 42, "nope"),
                *(_entry(p) for p in sent[1:]),
                _entry(sent[0]),
            ]
        ),
        f"AlterClientQuotas answered {{user=a}} twice{TAIL}",
    ),
    # Bytes that do not hold together: the codec's own reason (field path and cause).
    "bytes cut short": (_truncated, "AlterClientQuotasResponse v1: Entries[2]."),
    "a count past the entries": (_count_lies, "AlterClientQuotasResponse v1: Entries[3]."),
    "an entry past the count": (_past_the_count, "AlterClientQuotasResponse v1: "),
}
"""case: (the answer's payload for the entities sent, what the refusal says after
``malformed response from ADDRESS: ``)."""


def _alter(
    sent: Sent, answer: Callable[[Header], bytes], *, validate_only: bool
) -> tuple[BaseException, list[int], str]:
    """_alter sends ``sent`` (one request) to a fake answering with ``answer(header)``'s
    payload: the error alter raised, each request's entry count and the fake's address."""
    requests: list[int] = []

    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        requests.append(len(body["Entries"]))
        assert body["ValidateOnly"] is validate_only
        writer.write(fake_frame(answer(header)))

    alterations = [
        QuotaAlteration(Entity.of(p), (QuotaOp.set("producer_byte_rate", 1024.0),)) for p in sent
    ]
    # The fake answers at once and every case fails on its bytes, never on a timeout: the
    # bound only stops a hang, and is generous for a loaded machine (at 2 s, CI once timed
    # out the connection itself, before the request was sent).
    config = ClientConfig.from_properties({"request.timeout.ms": "30000", "retries": "0"})

    async def main() -> tuple[BaseException, str]:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], config)
            try:
                results = await admin.alter(alterations, validate_only=validate_only)
            except BrokerConnectionError as e:
                return e, addr
            finally:
                await admin.close()
            pytest.fail(f"a malformed answer was believed: {results}")

    error, address = asyncio.run(main())
    return error, requests, address


@pytest.mark.parametrize("validate_only", [True, False], ids=["validate-only", "commit"])
@pytest.mark.parametrize("sent", [ONE_PART, TWO_PARTS], ids=["one-part", "two-parts"])
@pytest.mark.parametrize("case", list(ANSWERS))
def test_an_answer_not_answering_each_entity_sent_once_is_refused_whole(
    case: str, sent: Sent, validate_only: bool
) -> None:
    payload, why = ANSWERS[case]
    error, requests, address = _alter(
        sent, lambda header: payload(header, sent), validate_only=validate_only
    )
    # Refused, not sent again: what it did is for the cluster to say.
    assert requests == [3], f"the fake saw {requests} requests; alter raised: {error}"
    assert str(error).startswith(f"malformed response from {address}: {why}")


def test_a_well_formed_answer_through_the_same_fake_is_believed() -> None:
    """The cases above fail for their fault alone: the fake's honest answer is accepted."""
    requests: list[int] = []

    async def script(header: Header, body: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        requests.append(len(body["Entries"]))
        answered = [
            dict((p["EntityType"], p["EntityName"]) for p in e["Entity"]) for e in body["Entries"]
        ]
        writer.write(fake_frame(_answer(header, [_entry(p) for p in reversed(answered)])))

    alterations = [
        QuotaAlteration(Entity.of(p), (QuotaOp.set("producer_byte_rate", 1024.0),))
        for p in TWO_PARTS
    ]

    async def main() -> list[Any]:
        async with fake_broker(script) as addr:
            admin = AsyncWireAdmin([addr], ClientConfig.from_properties({"retries": "0"}))
            try:
                return await admin.alter(alterations, validate_only=False)
            finally:
                await admin.close()

    results = asyncio.run(main())
    assert [(r.entity, r.ok) for r in results] == [(a.entity, True) for a in alterations]
    assert requests == [3]
