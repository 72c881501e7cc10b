"""The plan operation's request (:class:`~kquota.operations.plan.PlanRequest`), against a
snapshot file: desired state still to be read or read already, and
:func:`~kquota.operations.plan.make_plan` as the same road spelled in keywords."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kquota.desired import DesiredStateError
from kquota.model import Entity, Origin
from kquota.operations.desired import DesiredPaths, load_desired_state
from kquota.operations.overrides import PolicyOverrides
from kquota.operations.plan import (
    PlanOptions,
    PlanRequest,
    PlanResult,
    make_plan,
    plan_against,
    run_plan,
)
from kquota.plan.resolver import Principal
from kquota.plan.types import ChangeKind
from kquota.policy import ProtectMatch
from kquota.target import Target
from offline_cluster import ALICE, IP_LOOK_ALIKES, desired_folder, snapshot_target

YAML = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 2MiB}
  - match: {user: "bob\\u200b"}
    set: {producer_byte_rate: 1MiB}
"""


@pytest.fixture
def target(tmp_path: Path) -> Target:
    state = {
        ALICE: {"producer_byte_rate": 1048576.0},
        Entity.of({"user": "carol"}): {"producer_byte_rate": 1.0},
        **IP_LOOK_ALIKES,
    }
    return snapshot_target(tmp_path, state)


@pytest.fixture
def desired(tmp_path: Path) -> Path:
    return desired_folder(tmp_path, YAML)


def _unstamped(result: PlanResult) -> PlanResult:
    return dataclasses.replace(
        result, plan=dataclasses.replace(result.plan, created_at="2026-01-01T00:00:00Z")
    )


def test_desired_paths_are_read_first_and_their_warnings_lead(
    target: Target, desired: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked = PolicyOverrides(prune=True)
    options = PlanOptions(principals=(Principal(user="alice"),))
    result = run_plan(PlanRequest(target, DesiredPaths((desired,)), asked, options))
    loaded = load_desired_state([desired])
    assert len(loaded.warnings) == 1
    assert result.warnings[0] == str(loaded.warnings[0])
    assert "invisible characters" in result.warnings[0]
    assert len(result.warnings) == 2 and "one ip address" in result.warnings[1]
    # The same plan as of the desired state read by the caller, whose warnings are its own.
    read = run_plan(PlanRequest(target, loaded, asked, options))
    assert read.warnings == result.warnings[1:]
    assert _unstamped(read).plan == _unstamped(result).plan and read.changes == result.changes
    assert {a.entity for a in result.plan.alterations} >= {ALICE, Entity.of({"user": "carol"})}
    assert [c.key for c in result.changes] == ["producer_byte_rate"]
    assert capsys.readouterr() == ("", "")


def test_desired_paths_are_checked_before_the_state_is_read(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("apiVersion: kquota/v1\nkind: Nope\n")
    missing = Target.of_snapshot(tmp_path / "no-such-snapshot.json")
    with pytest.raises(DesiredStateError, match="bad.yaml"):
        run_plan(PlanRequest(missing, DesiredPaths((tmp_path / "bad.yaml",))))


def test_make_plan_is_the_request_spelled_in_keywords(target: Target, desired: Path) -> None:
    loaded = load_desired_state([desired])
    protect = (ProtectMatch.of({"user": "carol"}),)
    by_keywords = make_plan(
        target,
        loaded,
        prune=True,
        principals=[Principal(user="carol")],
        protect=protect,
        allow_protected_change=True,
    )
    request = PlanRequest(
        target,
        loaded,
        PolicyOverrides(prune=True, protect=protect, allow_protected_change=True),
        PlanOptions(principals=(Principal(user="carol"),)),
    )
    assert _unstamped(run_plan(request)) == _unstamped(by_keywords)
    assert by_keywords.plan.impact is not None  # the protected principal's verdict
    removed = [a.entity for a in by_keywords.plan.alterations if a.kind is ChangeKind.DELETE]
    assert Entity.of({"user": "carol"}) in removed  # pruned, over the guard's override


def test_plan_against_needs_the_desired_state_read(target: Target, desired: Path) -> None:
    request = PlanRequest(target, DesiredPaths((desired,)))
    with pytest.raises(TypeError, match="plan_against: the request's desired state"):
        plan_against(request, {}, Origin("c1", "id-1"))
