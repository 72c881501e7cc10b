"""ip names against the real broker: it stores each spelling as given, kquota sees one address.

Recorded on Kafka 4.3.1: altering ``::FFFF:10.0.0.1``, ``10.0.0.1``, ``2001:DB8::1`` and
``2001:db8::1`` leaves four stored entities, each described back exactly as written (the
broker does not canonicalise), while its connection quotas key them by InetAddress, so two
spellings are one enforced limit. ``fe80::1%lo`` is refused (INVALID_REQUEST).
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from kquota.kafka.admin import QuotaAlteration, QuotaOp, WireAdmin
from kquota.model import Entity
from polling import eventually

pytestmark = pytest.mark.integration

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n"


def ip(name: str) -> Entity:
    return Entity.of({"ip": name})


def setting(name: str, rate: float) -> QuotaAlteration:
    return QuotaAlteration(ip(name), (QuotaOp.set("connection_creation_rate", rate),))


def test_ip_spellings_against_the_broker(
    kafka_broker: BrokerInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    n, x = secrets.randbelow(250) + 1, secrets.token_hex(2)
    v4, v4_mapped = f"198.51.100.{n}", f"::FFFF:198.51.100.{n}"
    v6, v6_upper = f"2001:db8:{x}::1", f"2001:DB8:{x.upper()}::1"
    bootstrap = kafka_broker.bootstrap_servers
    with WireAdmin(bootstrap) as admin:
        admin.alter([setting(v4_mapped, 7), setting(v6_upper, 9)], validate_only=False)
        # A describe trails the alter before it.
        held = eventually(admin.describe_all, lambda s: ip(v4_mapped) in s and ip(v6_upper) in s)
    # The broker keeps the spelling it was given.
    assert held[ip(v4_mapped)] == {"connection_creation_rate": 7.0}
    assert held[ip(v6_upper)] == {"connection_creation_rate": 9.0}
    assert ip(v4) not in held and ip(v6) not in held

    try:
        monkeypatch.chdir(tmp_path)
        scope = ", ".join(f"{{ip: '{s}'}}" for s in (v4, v4_mapped, v6, v6_upper))
        (tmp_path / "kquota.yaml").write_text(
            "clusters:\n  local:\n"
            f"    kafka: {{bootstrap.servers: '{bootstrap}'}}\n"
            "    desired: [quotas]\n"
            f"    policy: {{prune: true, scope: [{scope}]}}\n"
        )
        (tmp_path / "quotas").mkdir()
        desired = tmp_path / "quotas" / "ip.yaml"
        desired.write_text(
            HEAD + f"  - match: {{ip: {v4}}}\n    set: {{connection_creation_rate: 7}}\n"
            f'  - match: {{ip: "{v6}"}}\n    set: {{connection_creation_rate: 9}}\n'
        )

        # Declared in kquota's spelling, held in another: nothing to do, no drift.
        code, out, err = run_kquota(["plan", "--format", "json"], capsys)
        assert code == 0, err
        assert json.loads(out)["alterations"] == []
        assert run_kquota(["drift"], capsys)[0] == 0

        # A change updates the entity the broker holds, under its spelling: no second record.
        desired.write_text(desired.read_text().replace("rate: 9}", "rate: 11}"))
        code, out, err = run_kquota(["plan"], capsys)
        assert code == 0, err
        assert f"~ {{ip={v6_upper}}}" in out and "0 to create, 1 to update, 0 to delete" in out
        code, out, err = run_kquota(["apply", "--auto-approve"], capsys)
        assert code == 0, out + err
        with WireAdmin(bootstrap) as admin:
            held = admin.describe_all()
        assert held[ip(v6_upper)] == {"connection_creation_rate": 11.0}
        assert ip(v6) not in held and ip(v4) not in held
        assert run_kquota(["drift"], capsys)[0] == 0

        # Export writes the broker's spellings; they validate and plan back to nothing.
        code, out, err = run_kquota(["export", "--out", "quotas/ip.yaml", "--force"], capsys)
        assert (code, err) == (0, "")
        assert v4_mapped in desired.read_text() and v6_upper in desired.read_text()
        code, out, err = run_kquota(["plan", "--detailed-exitcode"], capsys)
        assert code == 0, out + err

        # The cluster now holds a second spelling of one address: export leaves it out, says so.
        with WireAdmin(bootstrap) as admin:
            admin.alter([setting(v4, 8)], validate_only=False)
            eventually(admin.describe_all, lambda s: ip(v4) in s)
        code, out, err = run_kquota(["export"], capsys)
        assert code == 1
        assert f"warning: not exported: {{ip={v4_mapped}}}: duplicate entity {{ip={v4}}}" in err
        assert f"{{ip: {v4}}}" in out and v4_mapped not in out
        code, out, err = run_kquota(["plan"], capsys)
        assert f"warning: the cluster holds one ip address as {v4}, {v4_mapped}:" in err

    finally:
        with WireAdmin(bootstrap) as admin:  # leave the shared broker as found
            admin.alter(
                [
                    QuotaAlteration(ip(s), (QuotaOp.delete("connection_creation_rate"),))
                    for s in (v4, v4_mapped, v6_upper)
                ],
                validate_only=False,
            )
