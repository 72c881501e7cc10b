"""``kquota plan --usage``, offline against a snapshot: the throttle replay of a samples
file in every format, the throttle guard stopping a plan like the capacity guard, its
override, a saved stopped plan refused, and bad samples or settings reported by place."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kquota.cli.main import cli
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

MiB = 1024 * 1024
DESIRED = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 1MiB}
  - match: {user: bob}
    set: {producer_byte_rate: 20MiB}
"""
CONFIG = """\
clusters:
  c1:
    kafka: {bootstrap.servers: "127.0.0.1:1"}
    quota_window: {num: 30, size_seconds: 2}
    policy:
      usage: {max_throttled_fraction: 0.1}
"""


def _sample(user: str, metric: str, ago_min: int, value: float, cluster: str = "c1") -> str:
    at = int(time.time() * 1000) - ago_min * 60_000
    return json.dumps(
        {
            "cluster": cluster,
            "broker": "1",
            "user": user,
            "client_id": None,
            "metric": metric,
            "timestamp_ms": at,
            "value": value,
        }
    )


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "main.yaml").write_text(DESIRED)
    (tmp_path / "kquota.yaml").write_text(CONFIG)
    state = {
        Entity.of({"user": "alice"}): {"producer_byte_rate": 40.0 * MiB},
        Entity.of({"user": "bob"}): {"producer_byte_rate": 10.0 * MiB},
    }
    (tmp_path / "snap.json").write_bytes(
        dump_snapshot(state, meta={"cluster": "c1", "cluster_id": "id-1"})
    )
    lines = [_sample("alice", "produce-byte-rate", m, 2.0 * MiB) for m in (4, 3, 2, 1)]
    lines += [_sample("bob", "produce-byte-rate", m, 10.0 * MiB) for m in (4, 3, 2, 1)]
    lines += [_sample("bob", "produce-throttle-time", 2, 300.0)]
    lines += [_sample("dave", "produce-byte-rate", 60 * 24 * 8, 99.0 * MiB)]  # before --since
    (tmp_path / "usage.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    err = str(result.exception) if result.exception and result.exit_code == 1 else ""
    return result.exit_code, result.stdout, result.stderr + err


BASE = ("plan", "--cluster", "c1", "--snapshot", "snap.json", "--usage", "usage.jsonl")


def test_the_replay_is_in_the_text_plan_and_the_guard_stops(repo: Path) -> None:
    code, out, err = run(*BASE)
    assert code == 1
    assert out.startswith(
        "STOPPED: throttle guard: {user=alice} producer_byte_rate: throttled 100.0% of the "
        "observed time after the plan (was 0.0%), over max_throttled_fraction=0.1\n"
    )
    assert "with --allow-throttling." in out
    assert (
        "Throttle replay of usage.jsonl (samples " in out
        and "quota window 30 x 2 s, declared in kquota.yaml (quota_window)):" in out
    )
    assert "  2 observed principal quotas the plan changes: 1 throttled harder, 1 already " in out
    alice = out.index(
        "  {user=alice} producer_byte_rate: 41943040 (40 MiB/s) from {user=alice} -> "
    )
    bob = out.index("  {user=bob} producer_byte_rate: 10485760 (10 MiB/s) from {user=bob} -> ")
    assert alice < bob  # harder-throttled first
    assert "demand unknown above the current quota: already throttled on broker 1" in out
    # (2 MiB/s - 1 MiB/s) / 1 MiB/s x the declared 30 x 2 s window
    assert "peak 1048576 (1 MiB/s) over the bound, throttle time ~1m" in out
    assert "throttle guard: {user=alice}" in err


def test_the_override_lets_the_plan_through_and_the_json_carries_all(repo: Path) -> None:
    code, out, _ = run(*BASE, "--allow-throttling", "--format", "json")
    assert code == 0
    replay = json.loads(out)["throttle_replay"]
    assert replay["throttling_allowed"] is True and len(replay["throttling_stops"]) == 1
    assert replay["window"] == {
        "num": 30,
        "size_seconds": 2,
        "source": "declared in kquota.yaml (quota_window)",
    }
    assert replay["rows"] == 9  # dave's is older than --since
    alice, bob = replay["principals"]
    assert alice["principal"] == {"user": "alice"} and alice["censored"] is False
    assert alice["throttled_after"]["throttled_fraction"] == 1.0
    assert bob["censored"] is True and bob["censored_brokers"] == ["1"]
    code, out, _ = run(*BASE, "--allow-throttling", "--out", "plan.json")
    assert code == 0 and "throttle guard (overridden)" in out
    from kquota.planfile.reader import PlanFileError, load_plan_file
    from kquota.policy import Policy

    assert load_plan_file(repo / "plan.json", Policy()).alterations
    code, _, _ = run(*BASE, "--out", "stopped.json")
    assert code == 1
    with pytest.raises(PlanFileError, match="the throttle guard stopped this plan"):
        load_plan_file(repo / "stopped.json", Policy())


def test_the_markdown_carries_the_summary_and_the_verdict(repo: Path) -> None:
    code, out, _ = run(*BASE, "--allow-throttling", "--format", "markdown")
    assert code == 0
    assert "**Throttle replay:** 2 observed principal quotas the plan changes" in out
    assert "> **Throttle guard overridden** (`--allow-throttling`):<br>{user=alice}" in out
    assert "#### Throttle replay" in out
    code, out, _ = run(*BASE, "--format", "markdown")
    assert code == 1
    assert out.startswith("> [!CAUTION]\n> **Stopped: this plan will not be applied.**")
    assert "`--allow-throttling`" in out and "**Throttle guard:** " in out


def test_without_usage_the_plan_is_as_it_was(repo: Path) -> None:
    code, out, _ = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--format", "json")
    assert code == 0 and "throttle_replay" not in json.loads(out)


def test_the_window_ends_at_the_newest_sample_as_usage_reads_it(repo: Path) -> None:
    """The plan's replay and ``kquota usage`` cut the same window (kquota.usage.window): back
    from the newest sample, not from now, so last month's file still replays."""
    month = 30 * 24 * 3600 * 1000
    rows = [json.loads(line) for line in (repo / "usage.jsonl").read_text().splitlines()]
    for r in rows:
        r["timestamp_ms"] -= month
    (repo / "usage.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(*BASE, "--since", "90s", "--allow-throttling", "--format", "json")
    assert code == 0, err
    replay = json.loads(out)["throttle_replay"]
    # the newest samples are 1 min before the file's end: 90 s keeps alice's and bob's rates
    # at 2 and 1 min and bob's throttle time at 2 min
    assert replay["rows"] == 5
    code, out, err = run(
        "usage", "--cluster", "c1", "--snapshot", "snap.json", "--samples", "usage.jsonl",
        "--since", "90s", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["samples"] == 5


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{", "usage.jsonl:1: invalid JSON"),
        ('{"cluster": "c1"}', "usage.jsonl:1: missing broker, user, client_id, metric, "),
        (
            _sample("a", "produce-bytes", 1, 1.0),
            "usage.jsonl:1: unknown metric 'produce-bytes'; allowed: fetch-byte-rate",
        ),
        (_sample("a", "produce-byte-rate", 1, -1.0), "usage.jsonl:1: value -1.0 is negative"),
        (
            _sample("a", "produce-byte-rate", 1, 1.0).replace('"a"', "7"),
            "usage.jsonl:1: user 7; allowed: a string, or null",
        ),
        (
            _sample("a", "produce-byte-rate", 1, 1.0, cluster="other"),
            "usage.jsonl:1: a sample of cluster 'other', not of 'c1' (the cluster read)",
        ),
    ],
)
def test_a_bad_sample_is_named_by_file_and_line(repo: Path, line: str, said: str) -> None:
    (repo / "usage.jsonl").write_text(line + "\n")
    code, out, err = run(*BASE)
    assert code == 1 and out == ""
    assert said in err


def test_bad_usage_options_and_settings_are_refused(repo: Path) -> None:
    code, _, err = run(*BASE, "--since", "7 days")
    assert (
        code == 1
        and "--since '7 days': not a window; use days (7d) or a duration (12h, 90m)" in err
    )
    code, _, err = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--usage", "nope")
    assert code == 1 and "nope: no such sample file" in err
    (repo / "kquota.yaml").write_text(CONFIG.replace("0.1", "1.5"))
    code, _, err = run(*BASE)
    assert code == 1
    assert (
        "kquota.yaml:6:39: clusters.c1.policy.usage.max_throttled_fraction: 1.5 is out of range;"
        " allowed: a number from 0 to 1"
    ) in err
    (repo / "kquota.yaml").write_text(CONFIG.replace("num: 30", "num: 0"))
    code, _, err = run(*BASE)
    assert code == 1 and "clusters.c1.quota_window.num: " in err


def test_since_without_usage_is_refused(repo: Path) -> None:
    code, out, err = run("plan", "--cluster", "c1", "--snapshot", "snap.json", "--since", "1d")
    assert code == 1 and out == ""
    assert "--since needs --usage SOURCE" in err


def test_a_prometheus_url_that_never_answers_is_bounded_by_timeout(repo: Path) -> None:
    """A server that takes the connection and never answers (the kernel's backlog accepts
    it): the plan ends at its --timeout, naming the server without its credentials."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        url = f"http://reader:pw-canary@127.0.0.1:{port}/prom"
        began = time.monotonic()
        code, out, err = run(*BASE[:-1], url, "--timeout", "2s")
        took = time.monotonic() - began
    assert code == 1, out + err
    assert (
        f"the --timeout 2s deadline ran out: it was waiting for Prometheus at "
        f"http://127.0.0.1:{port}/prom for "
    ) in err, err
    assert "pw-canary" not in out + err and "reader" not in out + err
    assert took < 60, took  # bounded: the deadline, not the OS's TCP timeout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--usage", "ftp://reader:pw-canary@host/x"),
         "--usage ftp://host/x: give an http:// or https:// URL with a host"),
        (("--usage", "http://h:9090/?q=1"), "--usage http://h:9090/: the URL must have no ?query"),
        (("--usage", "http://h:9090", "--prometheus-token-env", "KQ_UNSET_TOKEN"),
         "$KQ_UNSET_TOKEN is not set or empty; it must hold a bearer token for Prometheus"),
        (("--usage", "usage.jsonl", "--prometheus-token-env", "KQ_UNSET_TOKEN"),
         "--prometheus-token-env and --prometheus-basic-auth-env need --usage URL (a "
         "Prometheus server), not a samples file"),
        (("--prometheus-basic-auth-env", "KQ_AUTH"),
         "--prometheus-token-env and --prometheus-basic-auth-env need --usage URL"),
    ],
)  # fmt: skip
def test_a_bad_prometheus_source_is_refused_before_anything_is_read(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], message: str
) -> None:
    monkeypatch.delenv("KQ_UNSET_TOKEN", raising=False)
    code, out, err = run("plan", "--cluster", "c1", "--snapshot", "snap.json", *args)
    assert code == 1, out + err
    assert message in err, err
    assert "pw-canary" not in out + err and "Traceback" not in err
