"""The library refuses what the CLI refuses, before any connection (issue 21).

``kquota.execute_plan`` takes the road ``kquota apply PLAN.json`` takes: every hostile saved
plan of the corpus, read through the one strict reader (:func:`kquota.read_plan`), and every
hostile plan held in memory that the reader would have refused to produce (no cluster id,
another cluster, a guard trip the file "allowed", a negative value...), is refused with the
CLI's message while a loopback listener standing in for the cluster counts zero connections.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import kquota
from fake_listener import FakeListener
from kquota.plan.types import Plan
from kquota.policy import Policy

CORPUS = Path(__file__).parents[1] / "planfile" / "plan_corpus"
HOSTILE = sorted(p for p in CORPUS.glob("*.json") if p.name != "good.json")


@pytest.fixture()
def listener() -> Iterator[FakeListener]:
    fake = FakeListener()
    try:
        yield fake
    finally:
        fake.close()


def _target(listener: FakeListener, policy: Policy | None = None) -> kquota.Target:
    # good.json was made for the cluster "local"; the listener stands where it would be.
    props = {"bootstrap.servers": listener.address, "retries": "0"}
    return kquota.Target.live(props, name="local", policy=policy)


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_every_hostile_saved_plan_is_refused_by_the_library(
    path: Path, listener: FakeListener
) -> None:
    expected = path.with_suffix(".expected").read_text().rstrip("\n")
    with pytest.raises(kquota.KquotaError) as info:
        plan = kquota.read_plan(path)  # the reader refuses most; the target check the rest
        kquota.execute_plan(_target(listener), plan)
    # The reader labels problems with the path; a plan in memory is labelled "plan".
    lines = str(info.value).replace(str(path), path.name).splitlines()
    assert [re.sub(r"^plan: ", f"{path.name}: ", line) for line in lines] == expected.splitlines()
    assert listener.accepted == 0


def _good() -> Plan:
    return kquota.read_plan(CORPUS / "good.json")


def _negative(plan: Plan) -> Plan:
    first = plan.alterations[0]
    ops = (replace(first.ops[0], value=-5.0, remove=False), *first.ops[1:])
    return replace(plan, alterations=(replace(first, ops=ops), *plan.alterations[1:]))


IN_MEMORY = {
    "cluster_id None": (lambda p: replace(p, cluster_id=None), "plan: cluster_id: null"),
    "cluster None": (lambda p: replace(p, cluster=None), "plan: cluster: null"),
    "fingerprint None": (
        lambda p: replace(p, snapshot_fingerprint=None),
        "plan: snapshot_fingerprint: null",
    ),
    "another cluster": (
        lambda p: replace(p, cluster="elsewhere"),
        "plan: cluster: the plan was made for 'elsewhere', but the target is 'local'",
    ),
    "negative value": (_negative, "plan: alterations[0].ops[0].value: must be greater than 0"),
}


@pytest.mark.parametrize("case", IN_MEMORY, ids=list(IN_MEMORY))
def test_a_hostile_plan_in_memory_is_refused_before_connecting(
    case: str, listener: FakeListener
) -> None:
    make, message = IN_MEMORY[case]
    with pytest.raises(kquota.KquotaError, match="nothing was applied") as info:
        kquota.execute_plan(_target(listener), make(_good()))
    assert str(info.value).startswith(message)
    assert listener.accepted == 0


def test_a_guard_the_plan_allowed_holds_without_the_callers_override(
    listener: FakeListener,
) -> None:
    allowed = kquota.read_plan(CORPUS / "guard_lies.json", Policy(allow_mass_removal=True))
    assert allowed.mass_removal_allowed and allowed.applyable  # the plan's own claim
    with pytest.raises(kquota.GuardRefused, match="mass-removal guard trips") as info:
        kquota.execute_plan(_target(listener), allowed)
    assert "--allow-mass-removal after review" in str(info.value)
    assert listener.accepted == 0


def test_a_plan_for_another_cluster_is_refused_as_that_before_any_guard(
    listener: FakeListener, tmp_path: Path
) -> None:
    """Issue 31: the cluster first. A plan the mass-removal guard would stop, made for another
    cluster, is refused for its cluster, not by a guard counted under the target's policy."""
    from kquota.operations.apply import apply

    allowed = kquota.read_plan(CORPUS / "guard_lies.json", Policy(allow_mass_removal=True))
    elsewhere = replace(allowed, cluster="elsewhere")
    with pytest.raises(kquota.KquotaError) as in_memory:
        kquota.execute_plan(_target(listener), elsewhere)
    saved = tmp_path / "elsewhere.json"
    doc = json.loads((CORPUS / "guard_lies.json").read_text())
    saved.write_text(json.dumps({**doc, "cluster": "elsewhere"}))
    with pytest.raises(kquota.KquotaError) as from_file:
        apply(_target(listener), saved)  # the road of kquota apply PLAN.json
    for info in (in_memory, from_file):
        assert not isinstance(info.value, kquota.GuardRefused)
        assert "the plan was made for 'elsewhere', but the target is 'local'" in str(info.value)
        assert "mass-removal" not in str(info.value)
    assert listener.accepted == 0


def test_out_of_scope_entities_are_refused_under_the_targets_policy(
    listener: FakeListener,
) -> None:
    from kquota.policy import ScopeMatch

    policy = Policy(scope=(ScopeMatch.of({"user": "nobody-*"}),))
    with pytest.raises(kquota.KquotaError, match="outside the cluster's ownership scope"):
        kquota.execute_plan(_target(listener, policy), _good())
    assert listener.accepted == 0


def test_the_count_moves_when_the_plan_is_good(listener: FakeListener) -> None:
    with pytest.raises(kquota.KquotaError):
        kquota.execute_plan(_target(listener), _good())  # the listener hangs up
    assert listener.accepted > 0


def test_the_corpus_is_all_fed() -> None:
    """Every hostile plan of the corpus is a case above (an empty glob would pass silently)."""
    assert len(HOSTILE) == len(list(CORPUS.glob("*.expected"))) >= 40


def test_the_operation_reads_desired_state_and_shows_its_warnings_before_connecting(
    listener: FakeListener, tmp_path: Path
) -> None:
    from kquota.operations.apply import ApplyHooks, ApplyRequest, run_apply
    from kquota.operations.desired import DesiredPaths

    path = tmp_path / "q.yaml"
    path.write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
        '  - {match: {user: "alice\\u200b"}, set: {producer_byte_rate: 1MiB}}\n'
    )
    seen: list[tuple[object, ...]] = []

    def stop() -> None:
        raise kquota.KquotaError("stopped before connecting")

    hooks = ApplyHooks(loaded=seen.append, checked=stop)
    with pytest.raises(kquota.KquotaError, match="stopped before connecting"):
        run_apply(ApplyRequest(_target(listener), DesiredPaths((path,))), hooks)
    assert len(seen) == 1 and "invisible characters" in str(seen[0][0])
    assert listener.accepted == 0
