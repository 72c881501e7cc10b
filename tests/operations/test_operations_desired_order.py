"""load_desired_state hands the digest's sort to plan_against (LoadedDesired.order): the
plan it makes is the one a LoadedDesired without that order makes, byte for byte."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kquota.desired.state import state_digest
from kquota.model import Entity, Origin, QuotaState, sorted_entities
from kquota.operations import LoadedDesired, load_desired_state
from kquota.operations.overrides import PolicyOverrides
from kquota.operations.plan import PlanRequest, plan_against
from kquota.plan.planner import plan
from kquota.render.json import render_plan
from kquota.target import Target

NAMES = [
    "alice",
    "ünï",
    "名前",
    "emoji\U0001f600",
    "\u202eevil",
    "pay\u200bments",
    "payments\u3164",
    'back\\\\slash\\"quote',
    "<img src=x onerror=alert(1)>",
    "x" * 30000,
]


def entry(match: str, values: str) -> str:
    return f"  - {{match: {{{match}}}, set: {{{values}}}}}"


def yaml_text() -> str:
    lines = ["apiVersion: kquota/v1", "kind: ClientQuotas", "quotas:"]
    for i, name in enumerate(reversed(NAMES)):  # not in sorted order
        lines.append(entry(f'client-id: "{name}"', f"request_percentage: {i + 1}.5"))
        lines.append(entry(f'user: "{name}", client-id: <default>', f"producer_byte_rate: {i + 1}"))
        lines.append(
            entry(f'user: "{name}"', "request_percentage: 0.00001, consumer_byte_rate: 1MiB")
        )
    lines += [
        entry("user: <default>", "producer_byte_rate: 5"),
        entry('user: {name: "<default>"}', "producer_byte_rate: 6"),
        entry("ip: 2001:db8::1", "connection_creation_rate: 7"),
        entry("ip: 10.0.0.1", "connection_creation_rate: 8"),
        entry("ip: <default>", "connection_creation_rate: 9"),
    ]
    return "\n".join(lines) + "\n"


@pytest.fixture
def loaded(tmp_path: Path) -> LoadedDesired:
    (tmp_path / "q.yaml").write_text(yaml_text(), encoding="utf-8")
    return load_desired_state([tmp_path / "q.yaml"])


def test_the_load_sorts_once_for_digest_and_plan(loaded: LoadedDesired) -> None:
    assert len(loaded.quotas) == 3 * len(NAMES) + 5
    assert loaded.order == tuple(sorted_entities(loaded.quotas))
    assert list(loaded.quotas) != list(loaded.order)  # the file's order is another one
    assert loaded.digest == state_digest(loaded.quotas)
    # Made by hand or replaced, a LoadedDesired has no order: the planner sorts.
    assert LoadedDesired(loaded.quotas, loaded.digest).order is None
    assert dataclasses.replace(loaded, quotas={}).order is None


def snapshots(loaded: LoadedDesired) -> list[QuotaState]:
    some = dict(list(loaded.quotas.items())[::3])
    changed = {e: {k: v * 2 for k, v in values.items()} for e, values in some.items()}
    undeclared = {Entity.of({"user": "zz-undeclared"}): {"producer_byte_rate": 1.0}}
    spelled = {Entity.of({"ip": "2001:DB8::1"}): {"connection_creation_rate": 1.0}}
    return [{}, some, changed, {**changed, **undeclared}, {**undeclared, **spelled}]


@pytest.mark.parametrize("prune", [False, True])
def test_plan_against_with_and_without_the_order_agree(loaded: LoadedDesired, prune: bool) -> None:
    target = Target.from_options("127.0.0.1:9092", None)
    plain = LoadedDesired(loaded.quotas, loaded.digest, loaded.warnings)
    for state in snapshots(loaded):
        asked = PolicyOverrides(prune=prune, allow_mass_removal=True)
        made = [
            plan_against(PlanRequest(target, d, asked), state, Origin("c", "id")).plan
            for d in (loaded, plain)
        ]
        same_time = [dataclasses.replace(p, created_at="2026-01-01T00:00:00Z") for p in made]
        assert same_time[0] == same_time[1]
        assert render_plan(same_time[0]) == render_plan(same_time[1])


def test_a_changed_quotas_dict_is_planned_as_it_is_now(loaded: LoadedDesired) -> None:
    # The caller edited the loaded dict after the load: the order no longer fits; the plan
    # is still of the dict as it is.
    quotas = loaded.quotas
    first = next(iter(quotas))
    del quotas[first]
    quotas[Entity.of({"user": "added"})] = {"producer_byte_rate": 3.0}
    policy = Target.from_options("127.0.0.1:9092", None).policy(
        prune=False, allow_mass_removal=False
    )
    assert loaded.order is not None and first in loaded.order
    assert plan(quotas, {}, policy, order=loaded.order) == plan(quotas, {}, policy)
