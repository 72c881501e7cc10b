"""``kquota apply`` reads and checks everything local before any connection (issue 9).

A loopback listener (``fake_listener``: a plain socket server, because "how many times did
kquota try to connect" is nothing a real broker reports) stands where the cluster would be
and counts accepted connections. Every doctored plan, bad file and missing approval must
leave the count at 0; one good plan pointed at the listener shows that the count moves. A
good plan still applies to the real broker.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_runner import run_kquota
from fake_listener import FakeListener
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

CORPUS = Path(__file__).parents[1] / "planfile" / "plan_corpus"
HOSTILE = sorted(p for p in CORPUS.glob("*.json") if p.name != "good.json")
PBR = "producer_byte_rate"
HEADER = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


@pytest.fixture()
def fake_listener() -> Iterator[FakeListener]:
    listener = FakeListener()
    try:
        yield listener
    finally:
        listener.close()


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_listener: FakeListener) -> Path:
    """A repository whose one cluster, "local", is the fake listener."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{fake_listener.address}', retries: '0'}}\n"
    )
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(
        HEADER + "  - {match: {user: alice}, set: {producer_byte_rate: 1MiB}}\n"
    )
    return tmp_path


@pytest.mark.parametrize("path", HOSTILE, ids=lambda p: p.stem)
def test_doctored_plan_opens_no_connection(
    path: Path, repo: Path, fake_listener: FakeListener, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_kquota(
        ["apply", str(path), "--cluster", "local", "--auto-approve"], capsys
    )
    assert code == 1
    first = path.with_suffix(".expected").read_text().splitlines()[0]
    assert first.removeprefix(path.name) in err
    assert "Traceback" not in err and out == ""
    assert fake_listener.accepted == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["apply", "plna.json", "--auto-approve"], "plna.json: cannot read the saved plan"),
        (["apply", "GOOD"], "there is no terminal to ask on"),
        (["apply"], "there is no terminal to ask on"),
        (["apply", "GOOD", "--bootstrap-server", "TARGET", "--auto-approve"], "made for 'local'"),
        (["apply", "--auto-approve", "bad"], "bad/main.yaml:4:"),
        (["plan", "bad"], "bad/main.yaml:4:"),
        (["drift", "bad"], "bad/main.yaml:4:"),
    ],
)
def test_local_problems_are_reported_before_any_connection(
    argv: list[str],
    message: str,
    repo: Path,
    fake_listener: FakeListener,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (repo / "bad").mkdir()
    (repo / "bad" / "main.yaml").write_text(HEADER + "  - {match: {user: a}, set: {x: [}\n")
    other = FakeListener()  # an ad-hoc target that is not the plan's cluster
    try:
        swap = {"GOOD": str(CORPUS / "good.json"), "TARGET": other.address}
        code, _, err = run_kquota([swap.get(a, a) for a in argv], capsys)
    finally:
        other.close()
    assert code == 1 and message in err, err
    assert fake_listener.accepted == 0 and other.accepted == 0


def test_no_target_means_no_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # no kquota.yaml here
    code, _, err = run_kquota(["apply", str(CORPUS / "good.json"), "--auto-approve"], capsys)
    assert code == 1
    assert "needs a target: give --cluster NAME" in err and "--bootstrap-server" in err


def test_the_counter_counts(
    repo: Path, fake_listener: FakeListener, capsys: pytest.CaptureFixture[str]
) -> None:
    # The good plan passes every local check, so apply does connect (and the listener hangs up).
    code, _, err = run_kquota(
        ["apply", str(CORPUS / "good.json"), "--auto-approve", "--timeout", "2"], capsys
    )
    assert code == 1 and "Traceback" not in err
    assert fake_listener.accepted >= 1


def test_plan_from_a_snapshot_records_its_cluster_id(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = {Entity.of({"user": "alice"}): {"producer_byte_rate": 5.0}}
    meta = {"cluster": "local", "cluster_id": "abcDEF123", "captured_at": "2026-11-23T06:00:00Z"}
    Path("snap.json").write_bytes(dump_snapshot(state, meta=meta))
    Path("bare.json").write_bytes(dump_snapshot(state))
    Path("kquota.yaml").unlink()  # the snapshot alone says which cluster it is

    code, _, err = run_kquota(["plan", "--snapshot", "snap.json", "--out", "p.json"], capsys)
    assert code == 0 and "warning" not in err
    saved = json.loads(Path("p.json").read_text())
    assert (saved["cluster"], saved["cluster_id"]) == ("local", "abcDEF123")

    code, _, err = run_kquota(["plan", "--snapshot", "bare.json", "--out", "q.json"], capsys)
    assert code == 0
    assert "warning: q.json: the plan records no cluster id" in err
    assert "apply will refuse this plan" in err
    assert json.loads(Path("q.json").read_text())["cluster_id"] is None


@pytest.mark.integration
def test_good_plan_applies_to_the_operators_target(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = f"t{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    Path("kquota.yaml").write_text(
        "clusters:\n  local:\n"
        f"    kafka: {{bootstrap.servers: '{kafka_broker.bootstrap_servers}'}}\n"
        f"    policy: {{scope: [{{user: '{prefix}*'}}]}}\n"
    )
    Path("quotas").mkdir()
    Path("quotas/main.yaml").write_text(
        HEADER + f"  - {{match: {{user: {prefix}ann}}, set: {{producer_byte_rate: 4096}}}}\n"
    )
    assert run_kquota(["plan", "--out", "plan.json"], capsys)[0] == 0
    # The plan names "local"; the operator's --bootstrap-server is that cluster's address.
    argv = ["apply", "plan.json", "--auto-approve"]
    code, out, err = run_kquota([*argv, "--bootstrap-server", kafka_broker.bootstrap_servers],
                                capsys)  # fmt: skip
    assert code == 0, out + err
    assert "committed 1 of 1 entities" in out
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        assert admin.describe_all()[Entity.of({"user": f"{prefix}ann"})] == {
            "producer_byte_rate": 4096.0
        }

    # Offline review: a snapshot records the cluster id, so its plan can be applied.
    assert run_kquota(["snapshot", "--out", "snap.json"], capsys)[0] == 0
    Path("quotas/main.yaml").write_text(
        HEADER + f"  - {{match: {{user: {prefix}ann}}, set: {{producer_byte_rate: 8192}}}}\n"
    )
    code, _, err = run_kquota(["plan", "--snapshot", "snap.json", "--out", "p2.json"], capsys)
    assert code == 0 and "warning" not in err
    assert json.loads(Path("p2.json").read_text())["cluster_id"] == kafka_broker.cluster_id
    code, out, err = run_kquota(
        ["apply", "p2.json", "--cluster", "local", "--auto-approve"], capsys
    )
    assert code == 0 and "committed 1 of 1 entities" in out, out + err


def test_desired_state_warnings_come_before_a_refusal_and_no_connection(
    repo: Path, fake_listener: FakeListener, capsys: pytest.CaptureFixture[str]
) -> None:
    # The operation reads the desired state; its warnings still reach the terminal first,
    # before the refusal to apply without a terminal to ask on, and nothing connects.
    (repo / "quotas" / "main.yaml").write_text(
        HEADER + '  - {match: {user: "alice\\u200b"}, set: {producer_byte_rate: 1MiB}}\n'
    )
    code, out, err = run_kquota(["apply", "--cluster", "local"], capsys)
    lines = err.splitlines()
    assert code == 1 and out == ""
    assert lines[0].startswith("warning: ") and "invisible characters" in lines[0], err
    assert lines[-1].startswith("error: not applying without confirmation"), err
    assert fake_listener.accepted == 0


def test_the_report_is_let_go_before_the_collector_comes_back(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --result, nothing holds the apply's report (and through it every alteration)
    when the command's paused collector resumes: its first pass would walk them all (a tenth
    of a second at 100k) only for reference counting to free them a moment later."""
    import contextlib
    import gc

    import kquota.cli.apply as cli_apply
    from kquota.apply.applier import ApplyReport

    alive_at_resume: list[int] = []
    real = cli_apply.collector_paused

    @contextlib.contextmanager
    def paused() -> Iterator[None]:
        with real():
            yield
            alive_at_resume.append(sum(isinstance(o, ApplyReport) for o in gc.get_objects()))

    monkeypatch.setattr(cli_apply, "collector_paused", paused)
    prefix = f"t{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    Path("quotas").mkdir()
    Path("quotas/main.yaml").write_text(
        HEADER + f"  - {{match: {{user: {prefix}bea}}, set: {{producer_byte_rate: 4096}}}}\n"
    )
    argv = ["apply", "quotas", "--auto-approve", "--no-lease"]
    code, out, err = run_kquota([*argv, "--bootstrap-server", kafka_broker.bootstrap_servers],
                                capsys)  # fmt: skip
    assert code == 0 and "committed 1 of 1 entities" in out, out + err
    assert alive_at_resume == [0]
    with WireAdmin(kafka_broker.bootstrap_servers) as admin:
        gone = QuotaAlteration(Entity.of({"user": f"{prefix}bea"}), (QuotaOp.delete(PBR),))
        assert admin.alter([gone], validate_only=False)[0].ok
