"""kquota revert and history against a real broker: an apply undone from its audit trail.

Kafka's own ``kafka-configs`` reads the values back: an independent second client, so a bug
shared by kquota's writer and reader cannot hide a wrong value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import KafkaConfigsTool
from kquota.devbroker.launcher import BrokerInfo
from polling import assert_eventually
from rollout_kit import Project, project

pytestmark = pytest.mark.integration


@dataclass
class Repo(Project):
    """Repo is the test's project, read back by Kafka's own kafka-configs."""

    tool: KafkaConfigsTool | None = None

    def configs(self, user: str) -> dict[str, float]:
        """The user's quotas as kafka-configs reads them."""
        assert self.tool is not None
        out = self.tool("--describe", "--user", f"{self.prefix}{user}").stdout
        found = re.search(r" are (.*)$", out, re.MULTILINE)
        if found is None or not found.group(1).strip():
            return {}
        pairs = (item.split("=", 1) for item in found.group(1).split(","))
        return {k.strip(): float(v) for k, v in pairs}

    def set_out_of_band(self, user: str, config: str) -> None:
        assert self.tool is not None
        self.tool("--alter", "--add-config", config, "--user", f"{self.prefix}{user}")


@pytest.fixture()
def repo(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kafka_broker: BrokerInfo,
    capsys: pytest.CaptureFixture[str],
    kafka_configs_tool: KafkaConfigsTool,
) -> Iterator[Repo]:
    base = project(
        tmp_path, monkeypatch, kafka_broker.bootstrap_servers, capsys, "r", audit_partitions=2
    )
    repo = Repo(base.root, base.prefix, base.bootstrap, capsys, base.topic, kafka_configs_tool)
    repo.configure(
        {
            "prune": "true",
            "scope": f"[{{user: '{repo.prefix}*'}}]",
            "max_removals": "100",
            "max_removal_fraction": "1.0",
        }
    )
    monkeypatch.setenv("KQ_TEST_AUDIT_KEY", AUDIT_KEY)
    with (repo.root / "kquota.yaml").open("a") as config:
        config.write("    audit_signing: {key_id: k1, keys: {k1: '${KQ_TEST_AUDIT_KEY}'}}\n")
    yield repo


AUDIT_KEY = "0123456789abcdef" * 4


def _plan_id(out: str, repo: Repo) -> str:
    code, hist, err = repo.kquota("history", "--format", "json")
    assert code == 0, hist + err
    return str(json.loads(hist)["applies"][-1]["plan_id"])


def test_revert_restores_every_before_value_and_history_lists_both(repo: Repo) -> None:
    p = repo.prefix
    # The starting point, written by Kafka's own tool: kim is updated, lee removed by prune.
    repo.set_out_of_band("kim", "producer_byte_rate=1000,consumer_byte_rate=2000")
    repo.set_out_of_band("lee", "request_percentage=10")
    assert_eventually(lambda: repo.configs("lee") == {"request_percentage": 10.0})
    before = {u: repo.configs(u) for u in ("kim", "lee", "new")}
    assert before["new"] == {}

    repo.write(
        [
            f"{{match: {{user: {p}kim}}, "
            "set: {producer_byte_rate: 5000, consumer_byte_rate: 2000}}",
            f"{{match: {{user: {p}new}}, set: {{consumer_byte_rate: 64}}}}",
        ]
    )
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    assert "committed 3 of 3 entities" in out and "audit: 3 events confirmed" in out
    applied = _plan_id(out, repo)

    code, out, err = repo.kquota("revert", "--last", "--out", "revert.json")
    assert code == 0, out + err
    assert f"revert of apply {applied}" in out
    assert f"~ {{user={p}kim}}" in out and f"- {{user={p}new}}" in out
    assert f"+ {{user={p}lee}}" in out
    saved = json.loads((repo.root / "revert.json").read_text())
    assert saved["cluster_id"] and saved["snapshot_fingerprint"].startswith("sha256:")

    code, out, err = repo.kquota("apply", "revert.json", "--cluster", "local", "--auto-approve")
    assert code == 0, out + err
    assert "committed 3 of 3 entities" in out and "verified" in out
    assert {u: repo.configs(u) for u in ("kim", "lee", "new")} == before

    code, out, err = repo.kquota("history")
    assert code == 0, out + err
    assert "applies recorded on audit topic" in out and ": 2" in out.splitlines()[0]
    lines = [line for line in out.splitlines() if "entities (" in line]
    assert lines[0].lstrip().startswith(applied) and "(+1 ~1 -1)" in lines[0]
    assert f"reverts {applied}" in lines[1] and "(+1 ~1 -1)" in lines[1]

    code, out, err = repo.kquota("history", "--entity", f"user={p}kim")
    assert code == 0, out + err
    assert out.count("producer_byte_rate: 1000 → 5000") == 1
    assert out.count("producer_byte_rate: 5000 → 1000") == 1
    assert "consumer_byte_rate" not in out  # unchanged keys are not in the trail

    # Reverting again has nothing left to do.
    code, out, err = repo.kquota("revert", "--plan-id", applied)
    assert code == 1 and "kim" in err and "changed since" in err  # the revert moved them
    # Forced, it has nothing to do; in JSON, stdout still says which apply it reverts.
    code, out, err = repo.kquota("revert", "--plan-id", applied, "--force", "--format", "json")
    assert code == 0, out + err
    assert "nothing to revert: the cluster already holds every before value" in err
    data = json.loads(out)
    assert data["revert"]["plan_id"] == applied and data["alterations"] == []


def test_revert_refuses_after_an_out_of_band_change_unless_forced(repo: Repo) -> None:
    p = repo.prefix
    repo.write(
        [
            f"{{match: {{user: {p}ann}}, set: {{producer_byte_rate: 100}}}}",
            f"{{match: {{user: {p}bo}}, set: {{producer_byte_rate: 200}}}}",
        ]
    )
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    applied = _plan_id(out, repo)
    repo.set_out_of_band("bo", "producer_byte_rate=300")
    assert_eventually(lambda: repo.configs("bo") == {"producer_byte_rate": 300.0})

    code, out, err = repo.kquota("revert", "--plan-id", applied, "--out", "revert.json")
    assert code == 1
    assert f"not reverting apply {applied}: 1 entities changed since it wrote them" in err
    assert f"{{user={p}bo}}: producer_byte_rate was set to 200" in err and "now 300" in err
    assert f"{p}ann" not in err
    assert not (repo.root / "revert.json").exists()

    code, out, err = repo.kquota("revert", "--plan-id", applied, "--force", "--out", "r.json")
    assert code == 0, out + err
    assert "warning: --force: 1 keys changed since the apply" in out
    # Undoing an apply that created everything removes everything: the guard says so, in
    # the words of a revert, and the operator overrides it on apply, as for any plan.
    assert f"this revert of apply {applied} is stopped by a guard: mass-removal guard" in out
    # JSON and markdown on stdout say it is a revert too, with the keys --force let through.
    code, out, err = repo.kquota("revert", "--plan-id", applied, "--force", "--format", "json")
    assert code == 0, out + err
    data = json.loads(out)["revert"]
    assert data["plan_id"] == applied and data["refusal"].startswith("mass-removal guard")
    assert data["forced"] == [
        {"entity": {"user": f"{p}bo"}, "key": "producer_byte_rate", "wrote": 200.0, "now": 300.0}
    ]
    code, out, err = repo.kquota("revert", "--plan-id", applied, "--force", "--format", "markdown")
    assert code == 0, out + err
    assert out.startswith(f"**Revert of apply `{applied}`**")
    assert f"`{{user={p}bo}}`: `producer_byte_rate` was set to 200 by the apply, now 300" in out
    code, out, err = repo.kquota("apply", "r.json", "--cluster", "local", "--auto-approve")
    assert code == 1 and "--allow-mass-removal" in err
    code, out, err = repo.kquota(
        "apply", "r.json", "--cluster", "local", "--auto-approve", "--allow-mass-removal"
    )
    assert code == 0, out + err
    assert repo.configs("ann") == {} and repo.configs("bo") == {}


def test_revert_of_an_unknown_plan_id_names_the_topic(repo: Repo) -> None:
    code, out, err = repo.kquota("revert", "--plan-id", "0123456789abcdef")
    assert code == 1
    assert f"no apply with plan id '0123456789abcdef' on audit topic {repo.topic!r}" in err
    assert "0 applies recorded" in err


# --- the trail is evidence, not input: forged records produced to the real topic ------------


def _produce(repo: Repo, *records: tuple[bytes, bytes, list[tuple[str, bytes]]]) -> None:
    """Writes records to the audit topic as anyone allowed to produce to it could."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": repo.bootstrap})
    for key, value, headers in records:
        wide: list[tuple[str, str | bytes | None]] = list(headers)
        producer.produce(repo.topic or "", key=key, value=value, headers=wide)
    assert producer.flush(30) == 0


def _event(repo: Repo, user: str | None, plan_id: str, **over: object) -> bytes:
    data: dict[str, object] = {
        "event_type": "quota.altered",
        "entity": {"user": user},
        "ops": [{"key": "producer_byte_rate", "before": 1.0, "after": None, "remove": True}],
        "plan_id": plan_id,
        "cluster": "local",
        "actor": "ci",
        "timestamp": "2026-01-01T00:00:00Z",
    }
    data.update(over)
    return json.dumps(data).encode()


def _key(user: str | None) -> bytes:
    from kquota.audit import record_key
    from kquota.model import Entity

    return record_key(Entity.of({"user": user})).encode()


def test_forged_records_are_refused_by_revert_and_marked_by_history(repo: Repo) -> None:
    p = repo.prefix
    repo.write([f"{{match: {{user: {p}ann}}, set: {{producer_byte_rate: 100}}}}"])
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0 and "audit: 1 events confirmed" in out, out + err
    applied = _plan_id(out, repo)
    ann = f"{p}ann"
    from kquota.audit_keys import AuditKeys

    wrong_key = AuditKeys("k1", {"k1": b"x" * 32})
    beef = _event(repo, f"{p}bo", "beefbeefbeefbeef", timestamp="2026-01-02T00:00:00Z")
    _produce(
        repo,
        # The real plan id, an earlier time, another before value for the key it wrote.
        (
            _key(ann),
            _event(
                repo,
                ann,
                applied,
                ops=[{"key": "producer_byte_rate", "before": 1.0, "after": 100.0, "remove": False}],
                timestamp="2000-01-01T00:00:00Z",
            ),
            [],
        ),
        # A whole apply with a nonsense time, and one naming no cluster.
        (_key(f"{p}x"), _event(repo, f"{p}x", "f00df00df00df00d", timestamp="yesterday"), []),
        (_key(f"{p}y"), _event(repo, f"{p}y", "0000000000000000", cluster=None), []),
        # Too large, nested too deeply, a number too long to be a quota.
        (b"k", b'{"event_type":"quota.altered","pad":"' + b"x" * 100_000 + b'"}', []),
        (b"k", b'{"event_type":"quota.altered","x":' + b"[" * 20_000 + b"]" * 20_000 + b"}", []),
        (_key(f"{p}z"), _event(repo, f"{p}z", "1111111111111111").replace(b"1.0", b"9" * 50), []),
        # Signed with a key kquota.yaml does not hold, under the real key id.
        (_key(f"{p}bo"), beef, wrong_key.headers(json.loads(beef))),
    )
    # Last on the topic (a later write: across partitions the broker's timestamps order it):
    # the "removal" of an entity that never existed.
    _produce(repo, (_key(None), _event(repo, None, "deaddeaddeaddead"), []))

    code, out, err = repo.kquota("revert", "--last", "--out", "undo.json")
    assert code == 1, out + err
    assert "not reverting apply deaddeaddeaddead: 1 of its events are not signed" in err
    assert "{user=<default>}: not signed" in err and "--allow-unsigned" in err
    assert not (repo.root / "undo.json").exists()

    code, out, err = repo.kquota("revert", "--plan-id", applied)
    assert code == 1
    assert f"not reverting apply {applied}: its events cannot all be one apply's" in err
    assert f"{{user={ann}}} producer_byte_rate is recorded twice with different values" in err

    code, out, err = repo.kquota("revert", "--plan-id", "beefbeefbeefbeef")
    assert code == 1
    assert "1 of its events do not verify" in err
    assert "its signature does not verify (forged or altered)" in err

    code, out, err = repo.kquota("revert", "--plan-id", "f00df00df00df00d")
    assert code == 1 and "no apply with plan id 'f00df00df00df00d'" in err

    code, out, err = repo.kquota("history")
    assert code == 0, out + err
    lines = {line.split()[0]: line for line in out.splitlines() if "entities (" in line}
    assert "[unverified]" in lines[applied] and "[inconsistent:" in lines[applied]
    assert "[DOES NOT VERIFY]" in lines["beefbeefbeefbeef"]
    assert "[unverified]" in lines["deaddeaddeaddead"]
    assert "5 records claim to be quota.altered events and are not valid:" in out
    assert re.search(r"offset \d+: 1000\d\d bytes; an audit event is at most 65536", out)
    assert re.search(r"offset \d+: nested too deeply", out)
    assert re.search(r"offset \d+: a number with 50 digits \(at most 32\)", out)
    assert re.search(r"offset \d+: timestamp 'yesterday': not an ISO 8601 time", out)
    assert re.search(r"offset \d+: cluster: required", out)
    assert "Traceback" not in out + err
    # Nothing above wrote a quota: no throttle on the default user appeared.
    assert repo.configs("ann") == {"producer_byte_rate": 100.0}


def test_an_unsigned_trail_needs_allow_unsigned_and_says_so_on_every_revert(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = repo.prefix
    text = (repo.root / "kquota.yaml").read_text()
    (repo.root / "kquota.yaml").write_text(text.split("    audit_signing:")[0])
    repo.write([f"{{match: {{user: {p}cy}}, set: {{producer_byte_rate: 300}}}}"])
    code, out, err = repo.kquota("apply", "--auto-approve")
    assert code == 0, out + err
    applied = _plan_id(out, repo)
    warning = "warning: no audit signing key is configured for this cluster"

    code, out, err = repo.kquota("revert", "--last")
    assert code == 1 and warning in err
    assert f"not reverting apply {applied}: its 1 events cannot be verified" in err
    assert "pass --allow-unsigned" in err
    code, out, err = repo.kquota("history")
    assert code == 0, out + err
    assert f"{applied}  " in out and "[unverified]" in out
    assert "(no audit signing key is configured (audit_signing in kquota.yaml)" in out

    code, out, err = repo.kquota("revert", "--last", "--allow-unsigned", "--format", "json")
    assert code == 0, out + err
    assert warning in err and f"revert of apply {applied}" in err
    data = json.loads(out)
    assert data["revert"]["plan_id"] == applied and data["revert"]["forced"] == []
    assert data["revert"]["apply"]["verified"] is False

    code, out, err = repo.kquota("revert", "--last", "--allow-unsigned", "--format", "markdown")
    assert code == 0, out + err
    assert out.startswith(f"**Revert of apply `{applied}`**")

    # Another cluster's apply, forged with this cluster's name: its cluster id gives it away.
    _produce(
        repo,
        (
            _key(f"{p}cy"),
            _event(repo, f"{p}cy", "abababababababab", cluster_id="NotThisClusterId0000"),
            [],
        ),
    )
    code, out, err = repo.kquota("revert", "--last", "--allow-unsigned")
    assert code == 1 and warning in err
    assert "apply abababababababab was made to the cluster with id 'NotThisClusterId0000'" in err
