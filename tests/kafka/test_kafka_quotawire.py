"""The specialised quota codecs agree with the interpreter, on good bytes and on bad ones.

The interpreter (kquota.kafka.protocol) is the reference: every property here compares the
fast path's answer with the interpreter's on the same input, and checks that the fast path
really ran (a fast path that always declined would pass every comparison while being slow).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kquota.kafka.protocol as kp
from kquota.kafka import quotawire as qw
from kquota.kafka.admin import QuotaAlteration, QuotaOp
from kquota.model import Entity
from quota_answers import (
    alter_answer,
    alter_entry,
    describe_answer,
    describe_entry,
    wire_entity,
)

sys.path.insert(0, str(Path(__file__).parent / "protocol"))
from protocol_testlib import bits, from_golden_json, golden_cases  # noqa: E402

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DESCRIBE = "DescribeClientQuotasResponse"
ALTER_RESPONSE = "AlterClientQuotasResponse"
ALTER_REQUEST = "AlterClientQuotasRequest"


def frame(version: int, body_bytes: bytes, correlation_id: int = 7) -> bytes:
    """frame puts a response header (v1 for the flexible version 1, else v0) before a body."""
    return struct.pack(">i", correlation_id) + (b"\x00" if version >= 1 else b"") + body_bytes


def outcome(fn: Any, *args: Any) -> Any:
    """outcome is a call's result, bit-exact, or the ProtocolError it raised (text and path)."""
    try:
        result = fn(*args)
    except kp.ProtocolError as e:
        return ("error", str(e), e.path)
    if isinstance(result, qw.DescribeAnswer):
        state = {e: bits(v) for e, v in result.state.items()}
        return ("ok", result.error_code, result.error_message, state)
    return ("ok", [(r.entity, r.error_code, r.error_message) for r in result])


def describe_reference(version: int, payload: bytes) -> Any:
    """describe_reference decodes with the interpreter and converts, as admin once did."""
    return outcome(qw._describe_slow, version, payload)


# ---- strategies: broker-shaped bodies (what the fast path must handle itself) -------------------

float64s = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, 2**64 - 1).map(lambda b: struct.unpack(">d", b.to_bytes(8, "big"))[0]),
)
types = st.sampled_from(["user", "client-id", "ip", "x-other", "ü"])
names = st.one_of(st.none(), st.text(max_size=20), st.text(min_size=130, max_size=140))
entities = st.lists(
    st.fixed_dictionaries({"EntityType": types, "EntityName": names}), min_size=1, max_size=3
)
keys = st.one_of(st.sampled_from(["producer_byte_rate", "request_percentage"]), st.text(max_size=8))
describe_bodies = st.fixed_dictionaries(
    {
        "ThrottleTimeMs": st.integers(-(2**31), 2**31 - 1),
        "ErrorCode": st.integers(-(2**15), 2**15 - 1),
        "ErrorMessage": st.one_of(st.none(), st.text(max_size=20)),
        "Entries": st.one_of(
            st.none(),
            st.lists(
                st.fixed_dictionaries(
                    {
                        "Entity": entities,
                        "Values": st.lists(
                            st.fixed_dictionaries({"Key": keys, "Value": float64s}), max_size=4
                        ),
                    }
                ),
                max_size=6,
            ),
        ),
    }
)
alter_response_bodies = st.fixed_dictionaries(
    {
        "ThrottleTimeMs": st.integers(-(2**31), 2**31 - 1),
        "Entries": st.lists(
            st.fixed_dictionaries(
                {
                    "ErrorCode": st.integers(-(2**15), 2**15 - 1),
                    "ErrorMessage": st.one_of(st.none(), st.text(max_size=20)),
                    "Entity": entities,
                }
            ),
            max_size=6,
        ),
    }
)
edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "cut", "insert", "drop"]),
        st.integers(0, 10**6),
        st.binary(min_size=1, max_size=3),
    ),
    min_size=1,
    max_size=3,
)


def mutate(data: bytes, changes: list[tuple[str, int, bytes]]) -> bytes:
    out = bytearray(data)
    for kind, at, extra in changes:
        i = at % (len(out) + 1)
        if kind == "flip" and i < len(out):
            out[i] ^= extra[0] or 0xFF
        elif kind == "cut":
            del out[i:]
        elif kind == "insert":
            out[i:i] = extra
        elif kind == "drop":
            del out[i : i + len(extra)]
    return bytes(out)


# ---- DescribeClientQuotas response --------------------------------------------------------------


def test_golden_describe_responses_decode_as_the_interpreter_does() -> None:
    cases = [(name, doc, data) for name, doc, data in golden_cases() if doc["message"] == DESCRIBE]
    assert len(cases) >= 8
    for name, doc, data in cases:
        payload = data if doc.get("frame") == "response" else frame(doc["version"], data)
        fast = outcome(qw._describe_fast, doc["version"], payload)
        assert fast == describe_reference(doc["version"], payload), name
        entries = from_golden_json(doc["body"])["Entries"] or []
        assert len(fast[3]) == len({str(e["Entity"]) for e in entries}), name


def broker_shaped(body: dict[str, Any]) -> dict[str, Any]:
    """broker_shaped keeps the first entry of each entity: a broker answers from a map."""
    seen: set[Entity] = set()
    entries = []
    for entry in body["Entries"] or []:
        entity = qw.entity_from_wire(entry["Entity"])
        if entity not in seen:
            seen.add(entity)
            entries.append(entry)
    return {**body, "Entries": entries if body["Entries"] is not None else None}


@FUZZ
@given(body=describe_bodies.map(broker_shaped), version=st.sampled_from([0, 1]))
def test_fast_describe_handles_broker_shaped_responses_itself(
    body: dict[str, Any], version: int
) -> None:
    payload = frame(version, kp.encode_body(DESCRIBE, version, body))
    fast = outcome(qw._describe_fast, version, payload)  # raises if the fast path declined
    assert fast == describe_reference(version, payload)
    assert fast[1:3] == (body["ErrorCode"], body["ErrorMessage"])


@FUZZ
@given(body=describe_bodies, version=st.sampled_from([0, 1]), changes=edits)
def test_corrupt_describe_responses_fail_as_the_interpreter_does(
    body: dict[str, Any], version: int, changes: list[tuple[str, int, bytes]]
) -> None:
    payload = mutate(frame(version, kp.encode_body(DESCRIBE, version, body)), changes)
    assert outcome(qw.decode_describe_response, version, payload) == describe_reference(
        version, payload
    )


# Tiers: value sections that repeat across entities (the decoder reads a repeated section once),
# with the same keys at other values, -0.0 next to 0.0, a repeated key and no values at all.
tiers = st.sampled_from(
    [
        [
            {"Key": "producer_byte_rate", "Value": 1024.0},
            {"Key": "consumer_byte_rate", "Value": 2.0},
        ],
        [
            {"Key": "producer_byte_rate", "Value": 4096.0},
            {"Key": "consumer_byte_rate", "Value": 2.0},
        ],
        [{"Key": "producer_byte_rate", "Value": 0.0}],
        [{"Key": "producer_byte_rate", "Value": -0.0}],
        [{"Key": "request_percentage", "Value": 1.0}, {"Key": "request_percentage", "Value": 2.0}],
        [],
    ]
)
tiered_bodies = st.lists(
    st.fixed_dictionaries({"Entity": entities, "Values": tiers}), max_size=12
).map(describe_answer)


@FUZZ
@given(body=tiered_bodies, changes=st.one_of(st.just([]), edits))
def test_repeated_value_sections_decode_as_the_interpreter_does(
    body: dict[str, Any], changes: list[tuple[str, int, bytes]]
) -> None:
    payload = mutate(frame(1, kp.encode_body(DESCRIBE, 1, body)), changes)
    assert outcome(qw.decode_describe_response, 1, payload) == describe_reference(1, payload)


def test_entities_on_one_tier_get_equal_but_their_own_values() -> None:
    tier = {"producer_byte_rate": 1024.0}
    body = describe_answer([describe_entry([("user", f"u{i}")], tier) for i in range(3)])
    state = qw._describe_flexible(frame(1, kp.encode_body(DESCRIBE, 1, body))).state
    first, *rest = state.values()
    assert first == {"producer_byte_rate": 1024.0}
    assert all(values == first and values is not first for values in rest)
    first["producer_byte_rate"] = 1.0  # an API caller may change what describe returned
    assert all(values == {"producer_byte_rate": 1024.0} for values in rest)


def test_corrupt_describe_response_names_the_field() -> None:
    body = describe_answer([describe_entry([("user", "a")], {})])
    payload = frame(1, kp.encode_body(DESCRIBE, 1, body))
    with pytest.raises(kp.ProtocolError) as caught:
        qw.decode_describe_response(1, payload[:-3])
    assert caught.value.path.startswith("Entries[0]")
    assert str(caught.value).startswith("DescribeClientQuotasResponse v1: Entries[0]")


def test_unknown_tagged_fields_are_left_to_the_interpreter() -> None:
    body = describe_answer()
    body["_unknown_tags"] = {5: b"xy"}
    payload = frame(1, kp.encode_body(DESCRIBE, 1, body))
    with pytest.raises(qw._Declined):
        qw._describe_fast(1, payload)
    assert qw.decode_describe_response(1, payload) == qw.DescribeAnswer(0, None, {})


def test_entities_come_out_in_canonical_order() -> None:
    parts = [("client-id", None), ("user", "alice")]
    body = describe_answer([describe_entry(parts, {"producer_byte_rate": 1.0})])
    answer = qw.decode_describe_response(1, frame(1, kp.encode_body(DESCRIBE, 1, body)))
    assert answer.state == {
        Entity.of({"user": "alice", "client-id": None}): {"producer_byte_rate": 1.0}
    }


@pytest.mark.parametrize("version", [0, 1])
@pytest.mark.parametrize("tiered", [False, True], ids=["values-apart", "same-values"])
def test_an_entity_listed_twice_is_reported_not_last_wins(version: int, tiered: bool) -> None:
    def entry(name: str | None, value: float) -> dict[str, Any]:
        return describe_entry([("client-id", None), ("user", name)], {"producer_byte_rate": value})

    second = 1024.0 if tiered else 1.0
    body = describe_answer([entry("alice", 1024.0), entry("bob", 2048.0), entry("alice", second)])
    payload = frame(version, kp.encode_body(DESCRIBE, version, body))
    with pytest.raises(kp.ProtocolError) as caught:
        qw.decode_describe_response(version, payload)
    assert str(caught.value) == (
        f"DescribeClientQuotasResponse v{version}: Entries[2].Entity: "
        "{user=alice, client-id=<default>} is listed twice (also Entries[0])"
    )
    assert caught.value.path == "Entries[2].Entity"


# ---- AlterClientQuotas response ------------------------------------------------------------------


def test_golden_alter_responses_decode_as_the_interpreter_does() -> None:
    cases = [d for d in golden_cases() if d[1]["message"] == ALTER_RESPONSE]
    assert cases
    for name, doc, data in cases:
        payload = frame(doc["version"], data)
        fast = outcome(qw._alter_response_fast, doc["version"], payload)
        assert fast == outcome(qw._alter_response_slow, doc["version"], payload), name
        assert len(fast[1]) == len(doc["body"]["Entries"])


@FUZZ
@given(body=alter_response_bodies, version=st.sampled_from([0, 1]), changes=edits)
def test_alter_responses_decode_as_the_interpreter_does(
    body: dict[str, Any], version: int, changes: list[tuple[str, int, bytes]]
) -> None:
    payload = frame(version, kp.encode_body(ALTER_RESPONSE, version, body))
    fast = outcome(qw._alter_response_fast, version, payload)
    assert fast == outcome(qw._alter_response_slow, version, payload)
    assert len(fast[1]) == len(body["Entries"])
    corrupt = mutate(payload, changes)
    assert outcome(qw.decode_alter_response, version, corrupt) == outcome(
        qw._alter_response_slow, version, corrupt
    )


# ---- AlterClientQuotas request ----------------------------------------------------------------

ops = st.lists(
    st.tuples(keys, float64s, st.booleans(), st.booleans()), max_size=4, unique_by=lambda o: o[0]
)
alterations = st.lists(st.tuples(entities, ops), max_size=6).map(
    lambda items: [
        QuotaAlteration(
            Entity(tuple((p["EntityType"], p["EntityName"]) for p in parts)),
            tuple(
                QuotaOp(key, None if (remove and none) else value, remove)
                for key, value, remove, none in op_list
            ),
        )
        for parts, op_list in items
    ]
)


def reference_alter_body(alts: list[QuotaAlteration], validate_only: bool) -> dict[str, Any]:
    """reference_alter_body writes the request by hand from the spec: a removal carries 0.0."""
    return {
        "Entries": [
            {
                "Entity": wire_entity(a.entity.parts),
                "Ops": [
                    {"Key": o.key, "Value": 0.0 if o.remove else o.value, "Remove": o.remove}
                    for o in a.ops
                ],
            }
            for a in alts
        ],
        "ValidateOnly": validate_only,
    }


@FUZZ
@given(alts=alterations, validate_only=st.booleans(), version=st.sampled_from([0, 1]))
def test_fast_alter_request_bytes_are_the_interpreters(
    alts: list[QuotaAlteration], validate_only: bool, version: int
) -> None:
    expected = kp.encode_body(ALTER_REQUEST, version, reference_alter_body(alts, validate_only))
    assert qw._alter_request_fast(version, alts, validate_only) == expected
    assert qw.encode_alter_request(version, alts, validate_only) == expected


def test_golden_alter_requests_are_reproduced() -> None:
    cases = [d for d in golden_cases() if d[1]["message"] == ALTER_REQUEST and "frame" not in d[1]]
    assert len(cases) >= 8
    for name, doc, data in cases:
        body = from_golden_json(doc["body"])
        alts = [
            QuotaAlteration(
                Entity(tuple((p["EntityType"], p["EntityName"]) for p in e["Entity"])),
                tuple(QuotaOp(o["Key"], o["Value"], o["Remove"]) for o in e["Ops"]),
            )
            for e in body["Entries"]
        ]
        assert qw._alter_request_fast(doc["version"], alts, body["ValidateOnly"]) == data, name


@pytest.mark.parametrize(
    "op",
    [QuotaOp("producer_byte_rate", "fast"), QuotaOp("k", True), QuotaOp(None, 1.0)],  # type: ignore[arg-type]
)
@pytest.mark.parametrize("version", [0, 1])
def test_bad_alterations_are_refused_as_the_interpreter_refuses_them(
    op: QuotaOp, version: int
) -> None:
    alts = [QuotaAlteration(Entity((("user", "a"),)), (op,))]
    with pytest.raises(kp.ProtocolError) as fast:
        qw.encode_alter_request(version, alts, False)
    with pytest.raises(kp.ProtocolError) as reference:
        kp.encode_body(ALTER_REQUEST, version, qw.alter_request_body(alts, False))
    assert (str(fast.value), fast.value.path) == (str(reference.value), reference.value.path)
    assert fast.value.path.startswith("Entries[0].Ops[0]")


def test_classic_strings_longer_than_int16_are_refused() -> None:
    alts = [QuotaAlteration(Entity((("user", "u" * 0x8000),)), (QuotaOp.set("k", 1.0),))]
    with pytest.raises(kp.ProtocolError, match="Entries\\[0\\].Entity\\[0\\].EntityName"):
        qw.encode_alter_request(0, alts, False)
    assert len(qw.encode_alter_request(1, alts, False)) > 0x8000


# ---- AlterExchange: an answer accepting everything, recognised from its bytes -----------------

ANSWER_CUTS = st.sampled_from(["whole", "drop one", "one twice"])


def answer_entries(alts: list[QuotaAlteration], data: st.DataObject) -> list[dict[str, Any]]:
    """answer_entries answers each alteration as a broker might: parts in either order,
    entries shuffled, mostly no error, sometimes an entry short or twice."""
    entries = []
    for a in alts:
        parts = list(a.entity.parts)
        if data.draw(st.booleans()):
            parts.reverse()
        code = data.draw(st.sampled_from([0, 0, 0, 41, -1]))
        message = data.draw(st.sampled_from([None, None, "no"]))
        entries.append(alter_entry(parts, code, message))
    entries = list(data.draw(st.permutations(entries)))
    cut = data.draw(ANSWER_CUTS)
    if entries and cut == "drop one":
        entries = entries[1:]
    elif entries and cut == "one twice":
        entries = [*entries, entries[0]]
    return entries


@FUZZ
@given(alts=alterations, version=st.sampled_from([0, 1]), data=st.data())
def test_alter_exchange_reads_every_answer_as_the_full_decoder_does(
    alts: list[QuotaAlteration], version: int, data: st.DataObject
) -> None:
    reads_as_the_full_decoder(alts, version, data)


SEPARATOR_LIKE = st.sampled_from(["\x00\x00\x00\x02\x05user", "\x00", "\x02", "a\x00\x00"])
one_type_alterations = st.builds(
    lambda kind, names, value: [
        QuotaAlteration(Entity(((kind, name),)), (QuotaOp.set("producer_byte_rate", value),))
        for name in names
    ],
    st.sampled_from(["user", "client-id", "ip"]),
    st.lists(
        st.one_of(st.none(), st.text(max_size=40), SEPARATOR_LIKE, SEPARATOR_LIKE.map("x".join)),
        max_size=8,
        unique=True,
    ),
    st.just(1024.0),
)


@FUZZ
@given(alts=one_type_alterations, data=st.data())
def test_answers_to_entities_of_one_type_are_read_as_the_full_decoder_does(
    alts: list[QuotaAlteration], data: st.DataObject
) -> None:
    """Entities of one part and one type (a users-only apply) have their answer split apart
    at the entries' fixed bytes; names holding those bytes, or null, change nothing."""
    reads_as_the_full_decoder(alts, 1, data)


def reads_as_the_full_decoder(
    alts: list[QuotaAlteration], version: int, data: st.DataObject
) -> None:
    """reads_as_the_full_decoder: an exchange over ``alts`` reads a broker-shaped answer, or
    a mutation of one, as the full decoder does, and accepts all only where it says so."""
    exchange = qw.AlterExchange(alts, True)
    assert exchange.encode(version) == qw.encode_alter_request(version, alts, True)
    body = alter_answer(answer_entries(alts, data))
    payload = frame(version, kp.encode_body(ALTER_RESPONSE, version, body))
    if data.draw(st.booleans()):
        payload = mutate(payload, data.draw(edits))
    read_as_the_full_decoder_does(exchange, version, payload, alts)


def read_as_the_full_decoder_does(
    exchange: qw.AlterExchange, version: int, payload: bytes, alts: list[QuotaAlteration]
) -> None:
    """read_as_the_full_decoder_does: ``exchange`` reads ``payload`` as the full decoder
    does, and accepts all only where the full reading says so too: each entity sent
    answered once, none with an error."""
    full = outcome(qw.decode_alter_response, version, payload)
    try:
        answer = exchange.decode(version, payload)
    except kp.ProtocolError:
        answer = None
    if answer is not qw.ALL_ACCEPTED:
        assert outcome(exchange.decode, version, payload) == full
        return
    assert full[0] == "ok"
    answered = [entity for entity, _, _ in full[1]]
    assert all(code == 0 and message is None for _, code, message in full[1])
    assert len(set(answered)) == len(answered)
    assert set(answered) == {a.entity for a in alts}


def test_alter_exchange_recognises_a_brokers_acceptance_without_decoding_it() -> None:
    alts = [
        QuotaAlteration(Entity.of(parts), (QuotaOp.set("producer_byte_rate", 1024.0),))
        for parts in [
            {"user": "alice"},
            {"user": None},
            {"user": "alice", "client-id": "app-1"},
            {"user": None, "client-id": None},
            {"user": "bob", "client-id": None},
            {"client-id": "üñï-\u200b"},
            {"ip": "10.0.0.1"},
            {"ip": None},
        ]
    ]
    exchange = qw.AlterExchange(alts, True)
    exchange.encode(1)
    # The broker's order: entries shuffled, client-id before user (as Kafka 4.3 answers).
    entries = [alter_entry(reversed(a.entity.parts)) for a in reversed(alts)]
    accepted = frame(1, kp.encode_body(ALTER_RESPONSE, 1, alter_answer(entries)))
    assert exchange.decode(1, accepted) is qw.ALL_ACCEPTED
    # One refusal: the whole answer is read, entity by entity.
    entries[3] = {**entries[3], "ErrorCode": 42, "ErrorMessage": "invalid"}
    refused = frame(1, kp.encode_body(ALTER_RESPONSE, 1, alter_answer(entries)))
    answer = exchange.decode(1, refused)
    assert answer == qw.decode_alter_response(1, refused)
    assert [r.error_code for r in answer] == [0, 0, 0, 42, 0, 0, 0, 0]
    # An entity built by hand out of canonical order is not what a decoded answer names.
    backwards = Entity((("client-id", "app-1"), ("user", "alice")))
    odd = qw.AlterExchange([QuotaAlteration(backwards, alts[2].ops)], True)
    odd.encode(1)
    one = [entries[5]]  # {user=alice, client-id=app-1}, accepted
    payload = frame(1, kp.encode_body(ALTER_RESPONSE, 1, alter_answer(one)))
    assert odd.decode(1, payload) == qw.decode_alter_response(1, payload)


# ---- AlterExchange with a template: a commit after the validate-only pass that accepted it ----


def accepting_answer(alts: list[QuotaAlteration], data: st.DataObject) -> list[dict[str, Any]]:
    """accepting_answer accepts every alteration once, as a broker does (its own order)."""
    entries = [alter_entry(a.entity.parts[:: data.draw(st.sampled_from([1, -1]))]) for a in alts]
    return list(data.draw(st.permutations(entries)))


@FUZZ
@given(alts=alterations, data=st.data())
def test_a_commit_templated_on_its_validation_sends_and_reads_as_a_fresh_one(
    alts: list[QuotaAlteration], data: st.DataObject
) -> None:
    validation = qw.AlterExchange(alts, True)
    validation.encode(1)
    accepted = kp.encode_body(ALTER_RESPONSE, 1, alter_answer(accepting_answer(alts, data)))
    validation.decode(1, frame(1, accepted))
    commit = qw.AlterExchange(alts, False, validation)
    # Every version, in any order (a reconnection may change it): the bytes a fresh
    # encoding of the commit gives.
    for version in data.draw(st.permutations([0, 1, 1])):
        assert commit.encode(version) == qw.encode_alter_request(version, alts, False)
    # The commit's answer: the validation's own (another correlation id and throttle time),
    # another broker-shaped one, or either mutated; read as the full decoder reads it.
    throttled = struct.pack(">i", data.draw(st.integers(0, 2**31 - 1))) + accepted[4:]
    other = kp.encode_body(ALTER_RESPONSE, 1, alter_answer(answer_entries(alts, data)))
    payload = frame(1, data.draw(st.sampled_from([throttled, other])), correlation_id=9)
    if data.draw(st.booleans()):
        payload = mutate(payload, data.draw(edits))
    read_as_the_full_decoder_does(commit, 1, payload, alts)


def test_a_commit_templated_on_an_accepted_validation_reuses_its_bytes() -> None:
    alts = [
        QuotaAlteration(Entity.of({"user": f"u{i}"}), (QuotaOp.set("producer_byte_rate", 1e6),))
        for i in range(3)
    ]
    validation = qw.AlterExchange(alts, True)
    sent = validation.encode(1)
    entries = [alter_entry([("user", n)]) for n in ("u2", "u0", "u1")]
    answer = kp.encode_body(ALTER_RESPONSE, 1, alter_answer(entries))
    assert validation.decode(1, frame(1, answer)) is qw.ALL_ACCEPTED
    assert validation.accepted_all
    commit = qw.AlterExchange(alts, False, validation)
    body = commit.encode(1)
    assert body == sent[:-2] + b"\x00\x00" == qw.encode_alter_request(1, alts, False)
    assert commit.decode(1, frame(1, answer, correlation_id=8)) is qw.ALL_ACCEPTED
    # A validation that did not accept everything is no template: the commit is encoded anew.
    entries[0] = {**entries[0], "ErrorCode": 42}
    refused = qw.AlterExchange(alts, True)
    refused.encode(1)
    refused.decode(1, frame(1, kp.encode_body(ALTER_RESPONSE, 1, alter_answer(entries))))
    assert not refused.accepted_all
    again = qw.AlterExchange(alts, False, refused)
    assert again.encode(1) == qw.encode_alter_request(1, alts, False)


def test_a_one_part_acceptance_is_split_apart_and_a_tricky_name_read_entry_by_entry() -> None:
    def accepted(
        parts: list[tuple[str, str | None]],
    ) -> tuple[qw.AlterExchange, bytes, qw.Compact]:
        alts = [
            QuotaAlteration(Entity((p,)), (QuotaOp.set("producer_byte_rate", 1e6),)) for p in parts
        ]
        exchange = qw.AlterExchange(alts, True)
        exchange.encode(1)
        entries = [alter_entry([p]) for p in reversed(parts)]
        body = kp.encode_body(ALTER_RESPONSE, 1, alter_answer(entries))
        return exchange, frame(1, body), qw._alter_request_compact(alts, True)

    names = [("user", "alice"), ("user", None), ("user", "b" * 200), ("client-id", "a\x00")]
    exchange, payload, compact = accepted(names)
    assert compact.one_part and compact.keys
    assert qw._accepts_one_part(payload, 10, compact.keys)
    assert exchange.decode(1, payload) is qw.ALL_ACCEPTED
    # A name holding the bytes the entries are split at: no match, the loop accepts.
    exchange, payload, compact = accepted([("user", "alice"), ("user", "x\x00\x00\x00\x00\x02y")])
    assert compact.one_part and compact.keys
    assert not qw._accepts_one_part(payload, 10, compact.keys)
    assert exchange.decode(1, payload) is qw.ALL_ACCEPTED
    # One entity answered twice, another not at all: not an acceptance, read in full.
    exchange, payload, compact = accepted(names[:2])
    twice = payload.replace(b"\x05user\x00", b"\x05user\x06alice")
    assert twice != payload and compact.keys
    assert not qw._accepts_one_part(twice, 10, compact.keys)
    assert exchange.decode(1, twice) == qw.decode_alter_response(1, twice)
    # An entity of two parts: the answer is read entry by entry.
    pair = [
        QuotaAlteration(
            Entity.of({"user": "a", "client-id": "b"}), (QuotaOp.set("producer_byte_rate", 1e6),)
        )
    ]
    assert not qw._alter_request_compact(pair, True).one_part
