"""Names through the commands: ip spellings agree everywhere, warnings stay on stderr,
export never writes what validate refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.model import Entity
from kquota.snapshot.files import dump_snapshot

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"
# The cluster holds each address under a spelling other than kquota's canonical one.
CLUSTER = {
    Entity.of({"ip": "::FFFF:10.0.0.1"}): {"connection_creation_rate": 8.0},
    Entity.of({"ip": "2001:DB8::1"}): {"connection_creation_rate": 9.0},
    Entity.of({"user": "alice"}): {"producer_byte_rate": 1024.0},
}
DESIRED = (
    HEAD + "  - match: {ip: 10.0.0.1}\n    set: {connection_creation_rate: 8}\n"
    '  - match: {ip: "2001:db8:0::1"}\n    set: {connection_creation_rate: 9}\n'
    "  - match: {user: alice}\n    set: {producer_byte_rate: 1KiB}\n"
)


@pytest.fixture()
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "snap.json").write_bytes(dump_snapshot(CLUSTER))
    (tmp_path / "q.yaml").write_text(DESIRED)
    return tmp_path


def test_ip_spellings_plan_is_empty(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--snapshot", "snap.json", "--prune", "--format", "json", "q.yaml"]
    code, out, err = run_kquota(argv, capsys)
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert plan["alterations"] == []
    assert plan["summary"]["unchanged"] == 3


def test_ip_spellings_change_updates_the_cluster_spelling(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "q.yaml").write_text(DESIRED.replace("rate: 9}", "rate: 10}"))
    code, out, _ = run_kquota(["plan", "--snapshot", "snap.json", "--prune", "q.yaml"], capsys)
    assert code == 0
    assert "~ {ip=2001:DB8::1}\n    ~ connection_creation_rate: 9 -> 10, higher by 11.1%\n" in out
    assert "0 to create, 1 to update, 0 to delete" in out


def test_ip_spellings_no_drift(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_kquota(["drift", "--snapshot", "snap.json", "--prune", "q.yaml"], capsys)
    assert code == 0, out


def test_ip_spellings_resolve(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for asked in ("10.0.0.1", "::ffff:10.0.0.1", "::FFFF:a00:1"):
        code, out, _ = run_kquota(
            ["resolve", "--snapshot", "snap.json", "--names", f"ip={asked}", "--format", "json"],
            capsys,
        )
        assert code == 0
        got = json.loads(out)["quotas"]["connection_creation_rate"]
        assert got == {"value": 8.0, "source": {"ip": "::FFFF:10.0.0.1"}}


def test_export_of_cluster_spellings_plans_back_empty(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_kquota(["export", "--snapshot", "snap.json", "--out", "x.yaml"], capsys)
    assert (code, err) == (0, "")
    assert run_kquota(["validate", "x.yaml"], capsys)[0] == 0
    argv = ["plan", "--snapshot", "snap.json", "--prune", "--detailed-exitcode", "x.yaml"]
    assert run_kquota(argv, capsys)[0] == 0


def test_export_leaves_out_what_validate_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    hostile = {
        Entity.of({"ip": "10.0.0.1"}): {"connection_creation_rate": 7.0},
        Entity.of({"ip": "::ffff:10.0.0.1"}): {"connection_creation_rate": 8.0},
        Entity.of({"ip": "localhost"}): {"connection_creation_rate": 9.0},
        Entity.of({"ip": "10.0.0.2", "user": "x"}): {"connection_creation_rate": 9.0},
        Entity.of({"group": "g1"}): {"producer_byte_rate": 9.0},
        Entity.of({"user": "\x1b[31mred"}): {"producer_byte_rate": 0.5},
        Entity.of({"user": "tab\tname"}): {"producer_byte_rate": 1024.0},
        Entity.of({"user": " padded"}): {"consumer_byte_rate": 2048.0},
    }
    (tmp_path / "snap.json").write_bytes(dump_snapshot(hostile))
    code, out, err = run_kquota(["export", "--snapshot", "snap.json"], capsys)
    assert code == 1
    assert err.splitlines() == [
        "warning: not exported: {user=\\x1b[31mred}: producer_byte_rate = 0.5: must be a whole "
        "number; allowed: a whole number of bytes from 1 to 9223372036854775807, or a size like "
        "10MiB, 500KB, 1.5MiB (KiB/MiB/GiB/TiB = 1024^n, KB/MB/GB/TB = 1000^n)",
        "warning: not exported: {ip=::ffff:10.0.0.1}: duplicate entity {ip=10.0.0.1}: also "
        "declared at the exported entity {ip=10.0.0.1} (written ::ffff:10.0.0.1 here and "
        "10.0.0.1 there: one address, which the broker enforces as one entity); allowed: each "
        "entity once among base files and once among overlays (an overlay replaces the base "
        "entry)",
        "warning: not exported: {ip=localhost}: ip 'localhost' is not an IP address (hostnames "
        "are refused: the broker would resolve them on the controller at apply time); allowed: "
        "an IPv4 or IPv6 literal such as 203.0.113.7 or 2001:db8::1, or <default>",
        "warning: not exported: {user=x, ip=10.0.0.2}: ip cannot be combined with user or "
        "client-id; allowed: user, client-id, user + client-id, or ip alone",
        "warning: not exported: {group=g1}: unknown entity type 'group'; allowed: user, "
        "client-id, ip",
        "error: 5 entities left out of the export: desired state cannot declare them (see the "
        "warnings above)",
    ]
    # What it did write validates with no problem and no warning, unusual names included.
    (tmp_path / "x.yaml").write_text(out)
    code, vout, verr = run_kquota(["validate", "x.yaml"], capsys)
    assert (code, verr) == (0, "")
    assert vout == "ok: 3 entities in 1 file\n"
    assert '{user: {name: "tab\\x09name", verbatim: true}}' in out
    assert '{user: {name: " padded", verbatim: true}}' in out


def test_name_warnings_go_to_stderr_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    snap = {Entity.of({"user": "x"}): {"producer_byte_rate": 1.0}}
    (tmp_path / "snap.json").write_bytes(dump_snapshot(snap))
    plain = HEAD + '  - match: {user: "bob"}\n    set: {producer_byte_rate: 1KiB}\n'
    (tmp_path / "q.yaml").write_text(plain)
    argv = ["plan", "--snapshot", "snap.json", "--format", "json", "q.yaml"]
    _, clean_out, clean_err = run_kquota(argv, capsys)
    (tmp_path / "q.yaml").write_text(plain.replace('"bob"', '"bob\\u200b"'))
    (tmp_path / "q.yaml.bak").write_text(plain)
    code, out, err = run_kquota([*argv[:-1], "."], capsys)
    assert code == 0 and clean_err == ""
    assert json.loads(out)["alterations"][0]["entity"] == {"user": "bob\u200b"}
    assert json.loads(out)["summary"] == json.loads(clean_out)["summary"]
    assert err.splitlines() == [
        "warning: q.yaml:4:19: user name 'bob\\u200b' has invisible characters (U+200B ZERO "
        'WIDTH SPACE); if the cluster really has this name, declare it as {name: "...", '
        "verbatim: true}",
        "warning: q.yaml.bak: not read: the name does not end in .yaml or .yml",
    ]


@pytest.mark.parametrize("command", ["plan", "drift"])
def test_one_address_held_twice_is_warned_about(
    repo: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    twice = {**CLUSTER, Entity.of({"ip": "10.0.0.1"}): {"connection_creation_rate": 8.0}}
    (repo / "snap.json").write_bytes(dump_snapshot(twice))
    code, out, err = run_kquota([command, "--snapshot", "snap.json", "q.yaml"], capsys)
    assert code == 0, out + err
    assert err.splitlines() == [
        "warning: the cluster holds one ip address as 10.0.0.1, ::FFFF:10.0.0.1: the broker "
        "enforces one limit for them, whichever was written last, and removing any of them "
        "removes it; keep one spelling (kquota alter --delete the others, then apply again)"
    ]


def test_validate_prints_warnings_and_problems_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = '  - match: {user: "\\e[2Kbob"}\n    set: {producer_byte_rate: 1KiB}\n'
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "a\x1b]0;x.yaml").write_text(HEAD + entry)
    (tmp_path / "q" / "b.yaml").write_text(HEAD + entry.replace("\\e[2K", "\\u200b"))
    (tmp_path / "q" / "c.yml.off").write_text(HEAD)
    code, out, err = run_kquota(["validate", "q"], capsys)
    assert (code, out) == (1, "")
    assert "\x1b" not in err and "\u200b" not in err
    assert err.splitlines() == [
        "warning: q/b.yaml:4:19: user name '\\u200bbob' has invisible characters (U+200B ZERO "
        'WIDTH SPACE); if the cluster really has this name, declare it as {name: "...", '
        "verbatim: true}",
        "warning: q/c.yml.off: not read: the name does not end in .yaml or .yml",
        "q/a\\x1b]0;x.yaml:4:19: user name '\\x1b[2Kbob' has control characters (U+001B a "
        'control character); allowed: a name without control characters, or {name: "...", '
        "verbatim: true} for a name a cluster really has",
        "1 problem found",
    ]
