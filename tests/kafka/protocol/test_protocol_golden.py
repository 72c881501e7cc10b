"""Golden bytes: our codec against what the official Java client (kafka-clients) serialises.

``golden/`` holds one ``<case>.bin`` + ``<case>.json`` pair per case, written by the Maven
project in ``golden_gen/``. Each case must encode to exactly the Java bytes and decode back to
exactly the JSON (floats compared bit for bit). ``test_golden_bytes_are_current`` rebuilds
them with Maven and a JVM and fails on any drift; to refresh after changing the generator:

    cd tests/kafka/protocol/golden_gen && mvn -q -B compile exec:java -Dgolden.out=../golden
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from protocol_testlib import GOLDEN, GOLDEN_GEN, bits, from_golden_json, golden_cases

from kquota.kafka import protocol as kp

CASES = golden_cases()


def test_golden_table_covers_the_issue() -> None:
    """The table has every message at every version the issue asks for, plus frames."""
    seen = {(doc["message"], doc["version"]) for _, doc, _ in CASES}
    expected = {
        *(
            (f"{m}{kind}", v)
            for m in ("DescribeClientQuotas", "AlterClientQuotas")
            for kind in ("Request", "Response")
            for v in (0, 1)
        ),
        *((f"ApiVersions{k}", v) for k in ("Request", "Response") for v in range(5)),
        *((f"SaslHandshake{k}", v) for k in ("Request", "Response") for v in range(2)),
        *((f"SaslAuthenticate{k}", v) for k in ("Request", "Response") for v in range(3)),
        # Principal discovery (--impact): every version the spec allows, requests and responses.
        *(
            (f"{m}{kind}", v)
            for m, versions in (
                ("DescribeUserScramCredentials", range(1)),
                ("DescribeAcls", range(1, 4)),
                ("ListGroups", range(6)),
                ("DescribeGroups", range(7)),
                ("ConsumerGroupDescribe", range(2)),
                ("DescribeConfigs", range(1, 5)),
            )
            for kind in ("Request", "Response")
            for v in versions
        ),
        ("RequestHeader", 1),
        ("RequestHeader", 2),
        ("ResponseHeader", 0),
        ("ResponseHeader", 1),
    }
    assert expected <= seen, sorted(expected - seen)
    frames = {doc.get("frame") for _, doc, _ in CASES}
    assert {"request", "response"} <= frames


@pytest.mark.parametrize(("name", "doc", "data"), CASES, ids=[c[0] for c in CASES])
def test_golden_case(name: str, doc: dict[str, Any], data: bytes) -> None:
    body = from_golden_json(doc["body"])
    message, version = doc["message"], doc["version"]
    frame = doc.get("frame")
    if frame is None:
        assert kp.encode_body(message, version, body) == data
        assert bits(kp.decode_body(message, version, data)) == bits(body)
    elif frame == "request":
        api_key = doc["api_key"]
        assert kp.request_header_version(api_key, version) == doc["header_version"]
        encoded = kp.encode_request(api_key, version, doc["correlation_id"], doc["client_id"], body)
        assert encoded == data
        header, decoded = kp.decode_request(data)
        assert header == {
            "RequestApiKey": api_key,
            "RequestApiVersion": version,
            "CorrelationId": doc["correlation_id"],
            "ClientId": doc["client_id"],
        }
        assert bits(decoded) == bits(body)
    else:
        api_key = doc["api_key"]
        assert kp.response_header_version(api_key, version) == doc["header_version"]
        assert kp.encode_response(api_key, version, doc["correlation_id"], body) == data
        correlation_id, decoded = kp.decode_response(api_key, version, data)
        assert correlation_id == doc["correlation_id"]
        assert bits(decoded) == bits(body)


def _require_jvm_tools() -> None:
    missing = [tool for tool in ("mvn", "java") if shutil.which(tool) is None]
    if not missing:
        return
    # A required part is missing: fail, never skip (as the broker fixture does).
    pytest.fail(f"{' and '.join(missing)} not on PATH; the golden-bytes drift check needs a JVM")


@pytest.mark.jvm
def test_golden_bytes_are_current(tmp_path: Path) -> None:
    """Regenerate with the Java client in a temp dir; every committed file must match."""
    _require_jvm_tools()
    project = tmp_path / "golden_gen"
    shutil.copytree(GOLDEN_GEN, project, ignore=shutil.ignore_patterns("target"))
    out = tmp_path / "golden"
    proc = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            "-Dstyle.color=never",
            "compile",
            "exec:java",
            f"-Dgolden.out={out}",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert proc.returncode == 0, f"mvn failed:\n{proc.stdout}\n{proc.stderr}"
    fresh = {p.name: p.read_bytes() for p in out.iterdir()}
    committed = {p.name: p.read_bytes() for p in GOLDEN.iterdir() if p.suffix in (".bin", ".json")}
    assert sorted(fresh) == sorted(committed), "golden case set drifted"
    drifted = sorted(name for name in fresh if fresh[name] != committed[name])
    assert not drifted, f"golden files drifted from the Java client: {drifted}"
