"""``kquota usage`` and ``kquota recommend`` offline: a snapshot, real kquota.yaml and
desired-state YAML, generated sample files; text, JSON and markdown against golden files
next to this test (``KQUOTA_REGEN_GOLDEN=1`` rewrites them, to review), the patch fed back to
the loader and to ``kquota plan``, and every bad input a message and exit 1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import gfm
from cli_runner import run_kquota
from kquota.desired.loader import load_desired
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot
from kquota.usage.rows import (
    FETCH_BYTE_RATE,
    FETCH_THROTTLE_TIME,
    PRODUCE_BYTE_RATE,
    PRODUCE_THROTTLE_TIME,
    REQUEST_TIME,
)
from sample_rows import DAY, series, week, write_jsonl, write_parquet

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("KQUOTA_REGEN_GOLDEN") == "1"
MiB = 2**20

CONFIG = """\
clusters:
  prod:
    kafka: {bootstrap.servers: "127.0.0.1:1"}
    capacity: {ingress: 40MiB/s, egress: 100MiB/s}
    policy:
      protect:
        - {user: svc-*}
"""
BASE = """\
apiVersion: kquota/v1
kind: ClientQuotas
quotas:
  - match: {user: alice}
    set: {producer_byte_rate: 10MiB, consumer_byte_rate: 20MiB}
  - match: {user: svc-billing}
    set: {producer_byte_rate: 8MiB}
  - match: {user: <default>}
    set: {producer_byte_rate: 1MiB}
  - match: {user: retired}
    set: {producer_byte_rate: 5MiB}
  - match: {client-id: batch}
    set: {request_percentage: 50}
"""
HOSTILE = "pipe|@team `x` <b>"


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kquota.yaml").write_text(CONFIG)
    (tmp_path / "quotas").mkdir()
    (tmp_path / "quotas" / "base.yaml").write_text(BASE)
    state = load_desired([tmp_path / "quotas"]).quotas
    (tmp_path / "snap.json").write_bytes(dump_snapshot(state, meta={"cluster": "prod"}))
    samples = tmp_path / "samples"
    samples.mkdir()
    write_jsonl(
        samples / "produce.jsonl",
        [
            *series("alice", None, PRODUCE_BYTE_RATE, week([2 * MiB, 3 * MiB])),
            *series("alice", None, PRODUCE_BYTE_RATE, week([MiB, 4 * MiB]), broker="2"),
            *series("alice", None, PRODUCE_THROTTLE_TIME, week(0)),
            *series("svc-billing", None, PRODUCE_BYTE_RATE, week(MiB)),
            *series("bob", None, PRODUCE_BYTE_RATE, week([MiB, 512 * 1024])),
            *series("bob", None, PRODUCE_THROTTLE_TIME, week([40, 0])),
            *series(HOSTILE, None, PRODUCE_BYTE_RATE, week(100 * 1024), broker="2"),
        ],
    )
    write_parquet(
        samples / "fetch.parquet",
        [
            *series("alice", None, FETCH_BYTE_RATE, week(5 * MiB)),
            *series("alice", None, FETCH_THROTTLE_TIME, week(0)),
            *series("erin", "loader", FETCH_BYTE_RATE, week([30 * MiB, 10 * MiB]), broker="3"),
            *series(None, "batch", REQUEST_TIME, week([10, 20, 30])),
        ],
    )
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_kquota(list(args), capsys)


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if REGEN:
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run with KQUOTA_REGEN_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


USAGE = ("usage", "--cluster", "prod", "--snapshot", "snap.json", "--samples", "samples")
RECOMMEND = ("recommend", "--cluster", "prod", "--snapshot", "snap.json", "--samples", "samples")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_usage_golden(repo: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *USAGE, "--format", fmt)
    assert (code, err) == (0, ""), err
    golden(f"usage.{ {'text': 'txt', 'json': 'json', 'markdown': 'md'}[fmt] }", out)
    if fmt == "json":
        data = json.loads(out)
        assert data["unmatched_quotas"] == [
            {"entity": {"user": "retired"}, "note": "candidate for removal: not removed"}
        ]
        bob = [u for u in data["usage"] if u["entity"] == {"user": "bob"}]
        assert [(u["censored"], u["quota_source"]) for u in bob] == [(True, {"user": None})]
    if fmt == "markdown":
        gfm.assert_aligned(out)


def test_usage_markdown_keeps_a_hostile_name_inert(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, *USAGE, "--format", "markdown")
    html = gfm.to_html(out)
    assert "<b>" not in html  # the name's tag stays text
    assert 'href="' not in html  # no @mention or autolink
    assert "pipe|@team `x` &lt;b&gt;" in html.replace("\\|", "|")


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_recommend_golden(repo: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *RECOMMEND, "--format", fmt)
    assert (code, err) == (0, ""), err
    golden(f"recommend.{ {'text': 'txt', 'json': 'json', 'markdown': 'md'}[fmt] }", out)
    if fmt == "markdown":
        gfm.assert_aligned(out)


def test_recommend_patch_plans_cleanly(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *RECOMMEND, "--out", "recommended.yaml")
    assert (code, err) == (0, ""), err
    patch = (repo / "recommended.yaml").read_text()
    golden("recommended.yaml", patch)
    assert "kind: ClientQuotasOverlay" in patch
    # the real loader reads base + patch, each proposal in force
    after = load_desired([repo / "quotas", repo / "recommended.yaml"]).quotas
    assert after[Entity.of({"user": "alice"})] == {
        "producer_byte_rate": 6 * MiB,
        "consumer_byte_rate": 7.5 * MiB,
    }
    assert after[Entity.of({"user": "erin", "client-id": "loader"})] == {
        "consumer_byte_rate": 45 * MiB
    }
    # svc-billing is protected (kquota.yaml): never lowered, so not in the patch
    assert after[Entity.of({"user": "svc-billing"})] == {"producer_byte_rate": 8 * MiB}
    code, out, err = run(
        capsys, "plan", "--cluster", "prod", "--snapshot", "snap.json", "quotas", "recommended.yaml"
    )
    assert code == 0, err
    golden("recommend_plan.txt", out)
    # asked again without --force, the patch is not replaced
    code, _, err = run(capsys, *RECOMMEND, "--out", "recommended.yaml")
    assert code == 1
    assert "recommended.yaml: already exists; --force replaces it" in err
    code, _, err = run(capsys, *RECOMMEND, "--out", "recommended.yaml", "--force")
    assert (code, err) == (0, "")


def test_recommend_options(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, *RECOMMEND, "--format", "json", "--percentile", "50", "--headroom", "2",
        "--keys", "producer_byte_rate", "--min-window", "8d",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["options"] == {
        "percentile": "50",
        "headroom": 2.0,
        "min_window_ms": 8 * DAY,
        "keys": ["producer_byte_rate"],
    }
    assert data["proposals"] == []
    assert {s["why"] for s in data["skipped"]} == {
        "observed for 7d, less than the minimum window 8d"
    }
    assert "patch" in data


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("usage", "--snapshot", "snap.json"), "no samples: name them with --samples PATH"),
        ((*USAGE, "--since", "soon"), "--since 'soon': not a window; use days (7d)"),
        ((*RECOMMEND, "--percentile", "101"), "--percentile '101': allowed: a percentile above 0"),
        ((*RECOMMEND, "--keys", "bytes"), "--keys 'bytes': unknown key 'bytes'; allowed: "),
        ((*RECOMMEND, "--min-window", "x"), "--min-window 'x': not a window"),
        ((*RECOMMEND, "--protect", "team=x"), "unknown principal type 'team'"),
        ((*RECOMMEND, "--out", "snap.json", "--force"), "snap.json"),
        (
            ("usage", "--snapshot", "snap.json", "--samples", "missing.jsonl"),
            "missing.jsonl: cannot read sample file: No such file",
        ),
    ],
)
def test_bad_options_are_messages(
    repo: Path, args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, *args)
    assert code != 0
    assert message in err
    assert "Traceback" not in err + out


def test_samples_of_another_cluster_are_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_jsonl(repo / "other.jsonl", series("alice", None, PRODUCE_BYTE_RATE, [1], cluster="qa"))
    code, _, err = run(capsys, "usage", "--cluster", "prod", "--snapshot", "snap.json", "--samples",
                       "other.jsonl")  # fmt: skip
    assert code == 1
    assert err == (
        "error: other.jsonl:1: a sample of cluster 'qa', not of 'prod' (the cluster read): one "
        "cluster's samples at a time\n"
    )
