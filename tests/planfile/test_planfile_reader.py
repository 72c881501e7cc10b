"""Saved plans are untrusted input: the planfile reader refuses every doctored plan, offline.

The corpus next to this file (plan_corpus/) holds hostile plans, each ``NAME.json`` with the
exact refusal in ``NAME.expected``; good.json is a plan the planner wrote. The property test
mutates good.json: every mutant is refused, or means exactly the original.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kquota.model import Entity
from kquota.plan.guard import GuardRefused, judge
from kquota.plan.types import Plan
from kquota.planfile.reader import PlanFileError, parse_plan
from kquota.planfile.target import TargetIdentity, check_target
from kquota.planfile.writer import unapplyable_because
from kquota.policy import Policy
from kquota.quotakeys import value_problem

CORPUS = Path(__file__).parent / "plan_corpus"
GOOD = (CORPUS / "good.json").read_bytes()
TARGET = TargetIdentity("local", "127.0.0.1:9092")
HOSTILE = sorted(p for p in CORPUS.glob("*.json") if p.name != "good.json")


def _check(data: bytes, name: str = "PLAN.json", policy: Policy | None = None) -> Plan:
    plan = parse_plan(data, name, policy or Policy())
    check_target(plan, name, TARGET)
    return plan


def test_the_corpus_covers_the_cases_the_issue_names() -> None:
    names = {p.stem for p in HOSTILE}
    assert {
        "not_json", "wrong_version", "fingerprint_null", "fingerprint_missing",
        "cluster_id_null", "nan_literal", "negative_value", "unknown_key", "ip_key_on_user",
        "user_key_on_ip", "huge_long", "huge_digits", "value_is_string", "duplicate_entity",
        "summary_lies", "guard_lies", "other_bootstrap",
    } <= names  # fmt: skip
    assert all(p.with_suffix(".expected").is_file() for p in HOSTILE)


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_hostile_plan_is_refused_with_its_field_named(path: Path) -> None:
    # A well-formed plan only the guard holds back is the guard's refusal, worded alike.
    refusal = GuardRefused if path.stem == "guard_lies" else PlanFileError
    with pytest.raises(refusal) as info:
        _check(path.read_bytes(), path.name)
    message = str(info.value)
    assert message == path.with_suffix(".expected").read_text().rstrip("\n")
    # Every line names the file and a field (or the file itself), and what is allowed.
    for line in message.splitlines()[:-1]:
        assert line.startswith(f"{path.name}: ") and "; allowed: " in line
    assert "Traceback" not in message and "Error:" not in message


def test_good_plan_reads_back_exactly() -> None:
    plan = _check(GOOD)
    assert plan.to_data() == json.loads(GOOD)
    assert plan.applyable and len(plan.alterations) == 4


def test_file_cannot_allow_mass_removal_but_the_operator_can() -> None:
    lying = (CORPUS / "guard_lies.json").read_bytes()
    with pytest.raises(GuardRefused, match="the plan file cannot allow it"):
        _check(lying)
    plan = _check(lying, policy=Policy(allow_mass_removal=True))
    assert plan.guard_violation is not None and plan.mass_removal_allowed and plan.applyable


def test_live_recount_trips_the_guard_a_file_claim_dodged() -> None:
    # The file claims 1000 managed values, so 5 removals look like 0.5%; the cluster has 12.
    data = json.loads(GOOD)
    alts = [
        {"entity": {"user": f"u{i}"}, "change": "delete",
         "ops": [{"key": "consumer_byte_rate", "value": None, "remove": True, "before": 1.0}]}
        for i in range(5)
    ]  # fmt: skip
    data["alterations"] = alts
    data["summary"].update(create=0, update=0, delete=5, unchanged=3, set_ops=0, remove_ops=5)
    data["summary"]["removals"] = {
        "quotas": 5, "entities": 5, "managed_quotas": 1000, "managed_entities": 1000
    }  # fmt: skip
    plan = _check(json.dumps(data).encode())
    assert plan.guard_violation is None
    live = {Entity.of({"user": f"u{i}"}): {"consumer_byte_rate": 1.0} for i in range(12)}
    again = judge(plan, Policy(), live)
    assert again.removals.managed_quotas == 12
    assert again.guard_violation is not None and "5 of 12" in again.guard_violation
    assert not again.applyable


def test_alteration_outside_the_policy_scope_is_refused() -> None:
    policy = Policy.build([{"user": "team-*"}])
    with pytest.raises(PlanFileError) as info:
        _check(GOOD, policy=policy)
    assert "alterations[0].entity: {user=alice} is outside the cluster's ownership scope" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("recorded", "target", "ok"),
    [
        ("local", TargetIdentity("local", "10.0.0.1:9092"), True),
        ("b:9092,A:9093", TargetIdentity(None, "a:9093, b:9092"), True),
        ("b:9092,a:9093", TargetIdentity("local", "a:9093,b:9092"), True),
        ("a:9092", TargetIdentity(None, "a:9093"), False),
        ("prod", TargetIdentity(None, "prod:9092"), False),
        ("prod", TargetIdentity("staging", "a:9092"), False),
    ],
)
def test_recorded_cluster_must_be_the_operators_target(
    recorded: str, target: TargetIdentity, ok: bool
) -> None:
    plan = Plan(alterations=(), cluster=recorded)
    if ok:
        check_target(plan, "p.json", target)
    else:
        with pytest.raises(PlanFileError, match=f"the plan was made for '{recorded}'"):
            check_target(plan, "p.json", target)


def test_plan_without_cluster_id_is_flagged_when_saved() -> None:
    reasons = unapplyable_because(Plan(alterations=(), cluster="c", snapshot_fingerprint="x"))
    assert len(reasons) == 1 and "no cluster id" in reasons[0]


def test_unreadable_plan_is_named() -> None:
    from kquota.planfile.reader import load_plan_file

    with pytest.raises(PlanFileError, match=r"nope\.json: cannot read the saved plan"):
        load_plan_file(Path("nope.json"), Policy())


# --- property: mutants are refused offline or mean exactly the original -------------------


def _meaning(plan: Plan) -> tuple[Any, ...]:
    """What apply acts on: where, under which id and fingerprint, and every alteration's
    entity and ops (key, value, remove).

    An op's ``before`` is what the plan shows, not what apply acts on: nothing offline can
    tell a doctored one from a real one (a set may add a key the entity never had), and at
    apply time the live cluster is held to the plan's fingerprint instead.
    """
    acts = tuple(
        (a.entity, tuple((op.key, op.value, op.remove) for op in a.ops)) for a in plan.alterations
    )
    return (plan.cluster, plan.cluster_id, plan.snapshot_fingerprint, acts)


ORIGINAL = _meaning(_check(GOOD))

Path_ = tuple[str | int, ...]


def _nodes(value: Any, at: Path_ = ()) -> list[Path_]:
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _nodes(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _nodes(v, (*at, i))
    return out


def _get(doc: Any, at: Path_) -> Any:
    for step in at:
        doc = doc[step]
    return doc


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
HOSTILE_NUMBERS = [math.nan, math.inf, -math.inf, -1, 0, -0.0, 0.5, 1.5, 2**31, 2**64, 10**400]


def _takes(key: str, n: float) -> bool:
    try:
        return value_problem(key, float(n)) is None
    except OverflowError:
        return False


def _mutate(doc: Any, data: st.DataObject) -> tuple[Any, bool]:
    """_mutate changes ``doc`` in place; True when the change must keep the meaning."""
    kind = data.draw(st.sampled_from(["delete", "retype", "number", "extra", "dup", "drop",
                                      "reorder", "float"]))  # fmt: skip
    paths = _nodes(doc)
    # An entity's type/name pairs are data: dropping one or nulling a name (the default
    # entity) names another valid entity, an edit that the fingerprint catches once online.
    if kind == "delete":
        fields = [p for p in paths if p and isinstance(p[-1], str) and p[-2:-1] != ("entity",)]
        at = data.draw(st.sampled_from(fields))
        del _get(doc, at[:-1])[at[-1]]
    elif kind == "retype":
        at = data.draw(st.sampled_from([p for p in paths if p]))
        old = _get(doc, at)
        is_name = at[-2:-1] == ("entity",)
        new = data.draw(
            json_values.filter(
                lambda v: (
                    _type(v) != _type(old) and not (is_name and (v is None or _type(v) == "str"))
                )
            )
        )
        _get(doc, at[:-1])[at[-1]] = new
    elif kind == "number":
        # "before" is the cluster's recorded value (the broker's looser rules let values in):
        # it is only type-checked offline, and bound by the fingerprint online.
        numbers = [p for p in paths if p and _type(_get(doc, p)) == "number" and p[-1] != "before"]
        at = data.draw(st.sampled_from(numbers))
        parent = _get(doc, at[:-1])
        # A value the key takes (0.5 for request_percentage) is an edit, not an attack.
        hostile = [n for n in HOSTILE_NUMBERS if at[-1] != "value" or not _takes(parent["key"], n)]
        parent[at[-1]] = data.draw(st.sampled_from(hostile))
    elif kind == "extra":
        at = data.draw(st.sampled_from([p for p in paths if isinstance(_get(doc, p), dict)]))
        _get(doc, at)[data.draw(st.sampled_from(["x", "bootstrap_servers", "note"]))] = 1
    elif kind in ("dup", "drop"):
        lists = [p for p in paths if isinstance(_get(doc, p), list) and _get(doc, p)]
        seq = _get(doc, data.draw(st.sampled_from(lists)))
        i = data.draw(st.integers(0, len(seq) - 1))
        if kind == "dup":
            seq.insert(i, copy.deepcopy(seq[i]))
        else:
            del seq[i]
    elif kind == "reorder":
        doc["alterations"] = data.draw(st.permutations(doc["alterations"]))
        for alt in doc["alterations"]:
            alt["entity"] = dict(reversed(list(alt["entity"].items())))
        return doc, True
    else:  # whole floats written as integers, as another JSON writer might
        for at in paths:
            v = _get(doc, at)
            if at and isinstance(v, float) and v.is_integer():
                _get(doc, at[:-1])[at[-1]] = int(v)
        return doc, True
    return doc, False


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_mutant_is_refused_or_means_exactly_the_original(data: st.DataObject) -> None:
    doc, keeps_meaning = _mutate(json.loads(GOOD), data)
    full = json.dumps(doc, indent=data.draw(st.sampled_from([None, 1, 2])))
    text = full[: data.draw(st.integers(0, len(full)))] if data.draw(st.booleans()) else full
    try:
        plan = _check(text.encode())
    except PlanFileError as e:
        assert not keeps_meaning or len(text) < len(full), str(e)
        assert "; allowed: " in str(e)
        return
    assert _meaning(plan) == ORIGINAL
