"""The consistency rule on three real nodes: once apply returns, every node shows it.

Apply goes through node 1 alone; right after it returns, with no waiting, each other node
answers a describe with everything applied, and a drift check reading node 3 is clean
(docs/consistency.md).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from cluster_harness import NODE_IDS, ThreeNodes
from kquota.model import Entity

pytestmark = pytest.mark.integration

N = 2_000


def _config(bootstrap: str, prefix: str) -> str:
    return (
        "clusters:\n"
        "  local:\n"
        f"    kafka: {{bootstrap.servers: '{bootstrap}'}}\n"
        "    desired: [quotas]\n"
        f"    policy: {{prune: true, max_removals: {N}, scope: [{{user: '{prefix}*'}}]}}\n"
    )


def test_after_apply_every_node_shows_it_and_drift_elsewhere_is_clean(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    three_nodes: ThreeNodes,
    capsys: pytest.CaptureFixture[str],
) -> None:
    prefix = f"c{secrets.token_hex(3)}-"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quotas").mkdir()
    for round_, rate in enumerate((100, 7000)):
        lines = "".join(
            f"  - {{match: {{user: {prefix}{i:04d}}}, set: {{consumer_byte_rate: {rate + i}}}}}\n"
            for i in range(N)
        )
        (tmp_path / "quotas" / "main.yaml").write_text(
            "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n" + lines
        )
        (tmp_path / "kquota.yaml").write_text(_config(three_nodes.address(1), prefix))
        code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
        assert code == 0, out[-1500:] + err[-1500:]
        assert f"committed {N} of {N} entities" in out, f"round {round_}"
        expected = {
            Entity.of({"user": f"{prefix}{i:04d}"}): {"consumer_byte_rate": float(rate + i)}
            for i in range(N)
        }
        for node_id in NODE_IDS:
            assert three_nodes.state_at(node_id, prefix) == expected, f"node {node_id}"
        (tmp_path / "kquota.yaml").write_text(_config(three_nodes.address(3), prefix))
        code, out, err = run_kquota(["drift"], capsys)
        assert code == 0, out[-1500:] + err[-1500:]
