"""``kquota import``: YAML that validates, refusals that write nothing, --out that never
clobbers, and inputs that are not files refused without blocking."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_runner import run_kquota

SAMPLES = Path(__file__).parent.parent / "migrate" / "samples"


def _tf(tmp_path: Path, *values: dict[str, object]) -> str:
    resources = [
        {"address": f"kafka_quota.q{i}", "mode": "managed", "type": "kafka_quota", "values": v}
        for i, v in enumerate(values)
    ]
    path = tmp_path / "state.json"
    path.write_text(
        json.dumps({"format_version": "1.0", "values": {"root_module": {"resources": resources}}})
    )
    return str(path)


def test_stdout_is_yaml_that_validates_and_notes_go_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_kquota(["import", "--from", "jikkou", str(SAMPLES / "jikkou")], capsys)
    assert code == 0, err
    assert out.startswith("# Imported by kquota from jikkou: ")
    assert "  - match: {user: other-user, client-id: <default>}\n" in out
    assert "warning: " in err and "skipped: kafka.jikkou.io/v1beta2 KafkaTopic" in err
    (tmp_path / "q.yaml").write_text(out)
    code, vout, verr = run_kquota(["validate", str(tmp_path / "q.yaml")], capsys)
    assert (code, vout.strip()) == (0, "ok: 7 entities in 1 file"), verr


def test_out_is_written_once_and_replaced_only_with_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "q.yaml"
    argv = ["import", "--from", "strimzi", str(SAMPLES / "strimzi"), "--out", str(out)]
    code, stdout, err = run_kquota(argv, capsys)
    assert (code, stdout) == (0, "")
    assert f"wrote {out}: 6 entities" in err
    out.write_text("# edited by hand\n")
    code, _, err = run_kquota(argv, capsys)
    assert code == 1 and "already exists (--force replaces it)" in err
    assert out.read_text() == "# edited by hand\n"
    assert [p.name for p in tmp_path.iterdir()] == ["q.yaml"]  # no temporary file left
    code, _, err = run_kquota([*argv, "--force"], capsys)
    assert code == 0, err
    assert "match: {user: CN=orders-tls}" in out.read_text()


def test_a_refusal_writes_nothing_and_lists_every_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = _tf(
        tmp_path,
        {"entity_type": "user", "entity_name": "ok", "config": {"producer_byte_rate": 1}},
        {
            "entity_type": "ip",
            "entity_name": "db.example.com",
            "config": {"connection_creation_rate": 1},
        },
        {"entity_type": "user", "entity_name": "n" * 40_000, "config": {"producer_byte_rate": 1}},
        {"entity_type": "user", "entity_name": "x", "config": {"producer_byte_rate": 0}},
    )
    out = tmp_path / "q.yaml"
    code, stdout, err = run_kquota(
        ["import", "--from", "terraform", state, "--out", str(out)], capsys
    )
    assert code == 1 and stdout == ""
    assert not out.exists()
    lines = err.splitlines()
    assert lines[-1] == f"error: 3 problems: nothing imported, {out} not written"
    assert f"{state}: kafka_quota.q3: config.producer_byte_rate: must be greater than 0" in err
    # What desired state itself cannot declare is refused by the loader's own rules:
    assert f"{state}: kafka_quota.q1: kquota cannot declare it: " in err and "hostnames" in err
    assert (
        f"{state}: kafka_quota.q2: kquota cannot declare it: " in err
        and "longer than the protocol allows" in err
    )


def test_inputs_that_are_not_regular_files_are_refused_without_blocking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    argv = ["import", "--from", "terraform", str(fifo), str(tmp_path), str(tmp_path / "gone")]
    code, _, err = run_kquota(argv, capsys)
    assert code == 1
    assert f"{fifo}: not read: it is a FIFO (named pipe)" in err
    assert f"{tmp_path}: a folder; allowed: the JSON files of terraform show -json" in err
    assert f"{tmp_path / 'gone'}: no such file or folder" in err


def test_from_is_required_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_kquota(["import", "x.yaml"], capsys)
    assert code == 1 and "Missing option '--from'" in err
    code, _, err = run_kquota(["import", "--from", "helm", "x.yaml"], capsys)
    assert code == 1 and "'helm' is not one of 'jikkou', 'strimzi', 'terraform'" in err
