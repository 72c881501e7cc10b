"""What revert trusts from the trail: signatures, agreement, the cluster id. Pure, no broker
(the same refusals on a real topic: tests/integration/test_integration_revert.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import gfm
from kquota.audit import AuditOp
from kquota.audit_keys import Verdict
from kquota.errors import KquotaError
from kquota.history.applies import EntityChange, applies
from kquota.history.trail import RecordedChange
from kquota.model import Entity
from kquota.operations.revert import (
    _desired_paths,
    check_cluster_id,
    check_desired,
    check_trusted,
)
from kquota.render.history import desired_lines, desired_markdown
from kquota.target import Target

OP = AuditOp("producer_byte_rate", None, 5.0, False)


def _event(user: str, offset: int, verdict: Verdict, **over: object) -> RecordedChange:
    event = RecordedChange(
        "p1", Entity.of({"user": user}), (OP,), "2026-01-01T00:00:00Z", "ci", None, "prod",
        0, offset, cluster_id="id-1", verdict=verdict, key_id="k1",
    )  # fmt: skip
    return replace(event, **over)  # type: ignore[arg-type]


def _refusal(*events: RecordedChange, signed: bool = True, allow: bool = False) -> str:
    (apply,) = applies(events)
    with pytest.raises(KquotaError) as err:
        check_trusted(apply, signed=signed, allow_unsigned=allow)
    return str(err.value)


def test_verified_events_pass_and_unsigned_ones_need_the_flag() -> None:
    (ok,) = applies([_event("a", 0, Verdict.VERIFIED)])
    check_trusted(ok, signed=True, allow_unsigned=False)
    unsigned = _event("b", 1, Verdict.UNSIGNED)
    message = _refusal(_event("a", 0, Verdict.VERIFIED), unsigned)
    assert "not reverting apply p1: 1 of its events are not signed" in message
    assert "partition 0 offset 1: {user=b}: not signed" in message
    (mixed,) = applies([_event("a", 0, Verdict.VERIFIED), unsigned])
    check_trusted(mixed, signed=True, allow_unsigned=True)
    assert "no audit signing key is configured" in _refusal(unsigned, signed=False)


def test_a_signature_that_does_not_verify_is_refused_even_with_the_flag() -> None:
    message = _refusal(
        _event("a", 0, Verdict.BAD_SIGNATURE),
        _event("b", 1, Verdict.UNKNOWN_KEY, key_id="k9"),
        allow=True,
    )
    assert "2 of its events do not verify" in message
    assert "partition 0 offset 0: {user=a}: its signature does not verify" in message
    assert (
        "offset 1: {user=b}: signed with key id 'k9', which audit_signing does not hold" in message
    )


def test_disagreeing_events_are_refused_first() -> None:
    message = _refusal(
        _event("a", 0, Verdict.VERIFIED), _event("b", 1, Verdict.VERIFIED, actor="mallory")
    )
    assert "its events cannot all be one apply's" in message
    assert "2 different actors" in message


def test_the_cluster_id_must_be_the_live_one() -> None:
    (apply,) = applies([_event("a", 0, Verdict.VERIFIED)])
    check_cluster_id(apply, "id-1", allow_unsigned=False)
    with pytest.raises(KquotaError) as err:
        check_cluster_id(apply, "id-2", allow_unsigned=True)
    assert "was made to the cluster with id 'id-1', but the target's cluster id is 'id-2'" in str(
        err.value
    )
    (old,) = applies([_event("a", 0, Verdict.UNSIGNED, cluster_id=None)])
    with pytest.raises(KquotaError) as err:
        check_cluster_id(old, "id-1", allow_unsigned=False)
    assert "its events record no cluster id" in str(err.value)
    check_cluster_id(old, "id-1", allow_unsigned=True)


# The desired state compared with a revert, read from real YAML files.

MIB = 1024.0 * 1024
PAYMENTS = Entity.of({"user": "payments-svc"})
BATCH = Entity.of({"user": "batch"})
GONE = Entity.of({"user": "gone"})


def _reverted() -> tuple[EntityChange, ...]:
    """An apply that raised payments-svc to 2 MiB/s, added batch's consumer rate and
    removed gone's quota (pruned)."""
    return (
        EntityChange(PAYMENTS, (AuditOp("producer_byte_rate", MIB, 2 * MIB, False),)),
        EntityChange(BATCH, (AuditOp("consumer_byte_rate", 4 * MIB, 8 * MIB, False),)),
        EntityChange(GONE, (AuditOp("request_percentage", 10.0, None, True),)),
    )


def _yaml(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n" + body)
    return path


def test_revert_names_the_file_and_line_that_still_declare_what_it_undoes(
    tmp_path: Path,
) -> None:
    _yaml(
        tmp_path / "quotas" / "payments.yaml",
        "  - match: {user: batch}\n"
        "    set: {producer_byte_rate: 1MiB}\n"
        "  - match: {user: payments-svc}\n"
        "    set: {producer_byte_rate: 2MiB}\n",
    )
    check = check_desired([tmp_path / "quotas"], _reverted())
    lines = desired_lines(check)
    at = f"{tmp_path / 'quotas' / 'payments.yaml'}"
    assert lines == [
        f"note: {at}:6:5 still declares {{user=payments-svc}} producer_byte_rate = 2097152 "
        "(2 MiB/s), the value this revert undoes: change it there (producer_byte_rate = "
        "1048576 (1 MiB/s)), or the next apply puts it back",
        f"note: {at}:4:5 declares {{user=batch}} without consumer_byte_rate, and this revert "
        "puts back consumer_byte_rate = 4194304 (4 MiB/s): add it there, or the next apply "
        "(with prune on) removes it again",
        "note: no desired-state file declares {user=gone}, and this revert puts back "
        "request_percentage = 10: declare it, or the next apply (with prune on) removes it "
        "again",
    ]
    assert [d.still for d in check.found] == [True, False, False]

    # Once the YAML is reverted too, nothing is left to say.
    _yaml(
        tmp_path / "quotas" / "payments.yaml",
        "  - match: {user: batch}\n"
        "    set: {producer_byte_rate: 1MiB, consumer_byte_rate: 4MiB}\n"
        "  - match: {user: payments-svc}\n"
        "    set: {producer_byte_rate: 1MiB}\n"
        "  - match: {user: gone}\n"
        "    set: {request_percentage: 10}\n",
    )
    assert desired_lines(check_desired([tmp_path / "quotas"], _reverted())) == [
        f"the desired state ({tmp_path / 'quotas'}) already declares every value this revert "
        "puts back"
    ]


def test_a_desired_state_that_does_not_load_or_is_not_known_is_said_never_raised(
    tmp_path: Path,
) -> None:
    bad = _yaml(tmp_path / "bad.yaml", "  - match: {user: x}\n    set: {producer_byte_rate: -1}\n")
    (line,) = desired_lines(check_desired([bad], _reverted()))
    assert line.startswith(f"note: the desired state ({bad}) does not load, so it was not ")
    assert f"1 problems; the first: {bad}:5:" in line
    (line,) = desired_lines(check_desired([], _reverted()))
    assert "the desired state was not checked" in line and "--desired PATH" in line


def test_revert_markdown_names_the_files_safely(tmp_path: Path) -> None:
    folder = tmp_path / "q`s <b>@me"
    _yaml(
        folder / "p.yaml", "  - match: {user: payments-svc}\n    set: {producer_byte_rate: 2MiB}\n"
    )
    check = check_desired([folder], _reverted()[:1])
    doc = gfm.assert_aligned("\n".join(desired_markdown(check)))
    (item,) = doc.root.all("li")
    assert item.text().startswith(f"{folder / 'p.yaml'}:4:5 still declares")
    assert "@" not in doc.root.outside_code() and "b" not in doc.root.tags()


def test_the_desired_paths_are_the_ones_the_next_plan_would_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ad_hoc = Target.resolve(bootstrap_server="127.0.0.1:9")
    assert _desired_paths(ad_hoc, ()) == []  # nothing known: the note says how to give them
    (tmp_path / "quotas").mkdir()
    assert _desired_paths(ad_hoc, ()) == [Path("quotas")]
    assert _desired_paths(ad_hoc, (tmp_path / "q2",)) == [Path("q2")]
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  prod:\n    kafka: {bootstrap.servers: '127.0.0.1:9'}\n"
        "    desired: [desired/prod]\n"
    )
    assert _desired_paths(Target.resolve(cluster_name="prod"), ()) == [Path("desired/prod")]
