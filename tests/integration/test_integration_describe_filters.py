"""DescribeClientQuotas filter semantics on the §6.3 fixture (Kafka's cases 41-58).

The broker is shared by the session, so names carry a token and results are compared on the
fixture's own entities: "the fixture entities this filter returns" must be exactly the
expected ones (any other entity in the result belongs to another test). ``{user=<default>}``
(E10) is global; no other test sets it alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import FilterComponent, QuotaAlteration, QuotaOp, WireAdmin
from kquota.kafka.config import ClientConfig
from kquota.kafka.errors import InvalidRequestError, UnsupportedVersionError
from kquota.model import Entity, QuotaState
from polling import assert_eventually

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)
RP, CCR = "request_percentage", "connection_creation_rate"
U1, U2, U3, U4 = (f"user-{i}-{T}" for i in range(1, 5))
C1, C2, C3 = (f"client-id-{i}-{T}" for i in range(1, 4))
IP1, IP2 = "10.41.0.1", "10.41.0.2"


def _e(
    user: str | None | bool = False, client: str | None | bool = False, ip: str | bool = False
) -> Entity:
    parts: dict[str, str | None] = {}
    if user is not False:
        parts["user"] = user  # type: ignore[assignment]
    if client is not False:
        parts["client-id"] = client  # type: ignore[assignment]
    if ip is not False:
        parts["ip"] = ip  # type: ignore[assignment]
    return Entity.of(parts)


FIXTURE: dict[str, tuple[Entity, dict[str, float]]] = {
    "E1": (_e(U1, C1), {RP: 50.50}),
    "E2": (_e(U2, C1), {RP: 51.51}),
    "E3": (_e(U3, C2), {RP: 52.52}),
    "E4": (_e(None, C1), {RP: 53.53}),
    "E5": (_e(U1, None), {RP: 54.54}),
    "E6": (_e(U3, None), {RP: 55.55}),
    "E7": (_e(U1), {RP: 56.56}),
    "E8": (_e(U2), {RP: 57.57}),
    "E9": (_e(U3), {RP: 58.58}),
    "E10": (_e(None), {RP: 59.59}),
    "E11": (_e(client=C2), {RP: 60.60}),
    "I1": (_e(ip=IP1), {CCR: 10.0}),
    "I2": (_e(ip=IP2), {CCR: 20.0}),
}
BY_ENTITY = {e: label for label, (e, _) in FIXTURE.items()}


@pytest.fixture(scope="module")
def admin(kafka_broker: BrokerInfo) -> Iterator[WireAdmin]:
    with WireAdmin([kafka_broker.bootstrap_servers], ClientConfig()) as a:
        results = a.alter(
            [
                QuotaAlteration(e, tuple(QuotaOp.set(k, v) for k, v in q.items()))
                for e, q in FIXTURE.values()
            ],
            validate_only=False,
        )
        assert all(r.ok for r in results), results
        # Present, not equal: the default entities are shared with other tests' keys.
        assert_eventually(lambda: all(e in a.describe_all() for e in BY_ENTITY), what="fixture")
        yield a


def labels(state: QuotaState) -> set[str]:
    """labels names the fixture entities in a result, checking their values on the way."""
    found = set()
    for entity, values in state.items():
        label = BY_ENTITY.get(entity)
        if label is not None:
            assert values == FIXTURE[label][1]
            found.add(label)
    return found


X, D, S = FilterComponent.exact, FilterComponent.default, FilterComponent.specified


@pytest.mark.parametrize("label", [f"E{i}" for i in range(1, 12)])
def test_exact_case_41(admin: WireAdmin, label: str) -> None:
    entity, values = FIXTURE[label]
    comps = [D(t) if n is None else X(t, n) for t, n in entity.parts]
    assert admin.describe(comps, strict=True) == {entity: values}


@pytest.mark.parametrize(
    "comps",
    [
        [X("user", U1), X("client-id", C2)],
        [X("user", U3), X("client-id", C1)],
        [X("user", U2), D("client-id")],
        [X("user", U4)],
        [D("user"), X("client-id", C2)],
        [X("client-id", C1)],
        [X("client-id", C3)],
    ],
)
def test_exact_no_match_case_42(admin: WireAdmin, comps: list[FilterComponent]) -> None:
    assert labels(admin.describe(comps, strict=True)) == set()


@pytest.mark.parametrize(
    ("case", "comps", "strict", "expected"),
    [
        ("43", [X("user", U1)], False, {"E1", "E5", "E7"}),
        ("44", [X("user", f"unknown-{T}")], False, set()),
        ("45", [X("client-id", C2)], False, {"E3", "E11"}),
        ("46", [D("user")], False, {"E4", "E10"}),
        ("47", [X("user", U2)], True, {"E8"}),
        ("48", [X("client-id", C1)], True, set()),
        ("49", [S("user")], True, {"E7", "E8", "E9", "E10"}),
        ("50", [S("user")], False, {f"E{i}" for i in range(1, 11)}),
        ("51", [S("client-id")], True, {"E11"}),
        ("52", [S("client-id")], False, {"E1", "E2", "E3", "E4", "E5", "E6", "E11"}),
        ("53", [S("ip")], False, {"I1", "I2"}),
        ("54", [], False, set(FIXTURE)),
        ("55", [], True, set()),
        ("58a", [X("user", U1), S("client-id")], False, {"E1", "E5"}),
        ("58b", [D("client-id")], False, {"E5", "E6"}),
        ("58c", [S("user"), D("client-id")], True, {"E5", "E6"}),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_filter_cases(
    admin: WireAdmin, case: str, comps: list[FilterComponent], strict: bool, expected: set[str]
) -> None:
    assert labels(admin.describe(comps, strict=strict)) == expected


def test_empty_strict_filter_returns_nothing_at_all(admin: WireAdmin) -> None:
    assert admin.describe([], strict=True) == {}


@pytest.mark.parametrize(
    ("comps", "message"),
    [
        (
            [S("ip"), S("user")],
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component.",
        ),
        (
            [S("ip"), S("client-id")],
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component.",
        ),
        (
            [X("user", U1), D("user")],
            "Entity type user cannot appear more than once in the filter.",
        ),
        ([X("", "x")], "Invalid empty entity type."),
        (
            [FilterComponent("user", 0, None)],
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        ),
        (
            [FilterComponent("user", 1, "x")],
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        (
            [FilterComponent("user", 2, "x")],
            "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.",
        ),
        ([FilterComponent("user", 3, None)], "Unknown match type 3"),
    ],
)
def test_invalid_filters_case_56_58(
    admin: WireAdmin, comps: list[FilterComponent], message: str
) -> None:
    with pytest.raises(InvalidRequestError) as e:
        admin.describe(comps, strict=False)
    assert (e.value.code, e.value.message) == (42, message)


@pytest.mark.parametrize("entity_type", ["other", "User"])
def test_unsupported_entity_type_case_57(admin: WireAdmin, entity_type: str) -> None:
    with pytest.raises(UnsupportedVersionError) as e:
        admin.describe([X(entity_type, "name")], strict=True)
    assert (e.value.code, e.value.message) == (35, f"Unsupported entity type {entity_type}")


def test_exact_reads_of_given_entities_return_those_the_broker_holds(admin: WireAdmin) -> None:
    """Apply's verification reads few entities by exact match (one strict describe each): the
    default entity, pairs, ip entities and an entity the broker does not hold."""
    wanted = [FIXTURE[label][0] for label in ("E1", "E4", "E5", "E10", "I2")]
    absent = _e(U4, C3)
    views = admin.describe_entities_each_broker([*wanted, absent])
    assert len(views) == 1, "one broker, one view"
    assert views[0] == {e: FIXTURE[BY_ENTITY[e]][1] for e in wanted}
    assert admin.describe_entities_each_broker([]) == [{}]
