"""``kquota describe`` and ``kquota alter`` end to end against the real broker."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.devbroker.launcher import BrokerInfo
from polling import eventually

pytestmark = pytest.mark.integration

T = secrets.token_hex(3)


run = run_kquota


def describe_until(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    needle: str | Sequence[str],
    present: bool = True,
) -> str:
    """describe_until runs describe until every needle is (or is no longer) in its output:
    a describe trails the alters before it."""
    needles = [needle] if isinstance(needle, str) else list(needle)

    def fetch() -> str:
        code, out, err = run(argv, capsys)
        assert code == 0, err
        return out

    return eventually(fetch, lambda out: all((n in out) == present for n in needles))


def test_alter_then_describe_text_and_json(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    user, app = f"cli-user-{T}", f"cli-app-{T}"
    code, out, err = run(
        ["alter", *b, "--names", f"user={user},client-id={app}",
         "--add", "producer_byte_rate=1048576,request_percentage=12.5"],
        capsys,
    )  # fmt: skip
    assert (code, out) == (0, f"Altered {{user={user}, client-id={app}}}\n"), err
    names = ["--names", f"user={user},client-id={app}"]
    out = describe_until(["describe", *b, *names], capsys, "producer_byte_rate")
    assert out == (
        f"{{user={user}, client-id={app}}}\n"
        "  producer_byte_rate=1048576\n"
        "  request_percentage=12.5\n"
    )
    code, out, _ = run(["describe", *b, *names, "--format", "json"], capsys)
    assert json.loads(out) == {
        "format_version": 1,
        "entries": [
            {
                "entity": {"user": user, "client-id": app},
                "quotas": {"producer_byte_rate": 1048576.0, "request_percentage": 12.5},
            }
        ],
    }
    # KIP-546 matching: the user's filter shows its entities with a client-id too ...
    code, out, _ = run(["describe", *b, "--names", f"user={user}"], capsys)
    assert (code, out) == (
        0,
        f"{{user={user}, client-id={app}}}\n"
        "  producer_byte_rate=1048576\n"
        "  request_percentage=12.5\n",
    )
    # ... and --strict narrows to exactly the given types: the user alone has no quotas
    code, out, _ = run(["describe", *b, "--names", f"user={user}", "--strict"], capsys)
    assert (code, out) == (0, "")
    code, out, _ = run(
        ["alter", *b, *names, "--delete", "producer_byte_rate,request_percentage"], capsys
    )
    assert code == 0
    assert describe_until(["describe", *b, *names], capsys, "producer", present=False) == ""


def test_defaults_and_describe_all(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    app = f"cli-def-{T}"
    code, _, err = run(
        [
            "alter",
            *b,
            "--defaults",
            "user",
            "--names",
            f"client-id={app}",
            "--add",
            "consumer_byte_rate=5e6",
        ],
        capsys,
    )
    assert code == 0, err
    out = describe_until(["describe", *b], capsys, f"{{user=<default>, client-id={app}}}")
    assert f"{{user=<default>, client-id={app}}}\n  consumer_byte_rate=5000000\n" in out
    out = describe_until(
        ["describe", *b, "--defaults", "user", "--names", f"client-id={app}", "--format", "json"],
        capsys,
        app,
    )
    assert json.loads(out)["entries"] == [
        {"entity": {"user": None, "client-id": app}, "quotas": {"consumer_byte_rate": 5000000.0}}
    ]


def test_validate_only_via_cli(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    names = ["--names", f"ip=10.88.{int(T[:2], 16)}.1"]
    code, out, _ = run(
        ["alter", *b, *names, "--add", "connection_creation_rate=9", "--validate-only"], capsys
    )
    assert code == 0 and out.startswith("Validated (not applied) {ip=10.88.")
    time.sleep(0.3)
    assert run(["describe", *b, *names], capsys)[1] == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--names", "foo=bar", "--add", "producer_byte_rate=10"],
         "Unhandled client quota entity type: foo"),
        (["--names", "ip=example.invalid", "--add", "connection_creation_rate=10"],
         "example.invalid is not a valid IP or resolvable host."),
    ],
)  # fmt: skip
def test_broker_errors_reach_the_user(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(
        ["alter", "--bootstrap-server", kafka_broker.bootstrap_servers, *args], capsys
    )
    assert code == 1
    assert message in err and "INVALID_REQUEST" in err


def test_describe_broker_error(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["describe", "--bootstrap-server", kafka_broker.bootstrap_servers, "--names", "other=x"],
        capsys,
    )
    assert code == 1 and "Unsupported entity type other" in err


def test_command_config_scram_file(
    kafka_broker: BrokerInfo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    props = tmp_path / "client.properties"
    props.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '  username="alice" password="alice-secret";\n'
    )
    b = ["--bootstrap-server", kafka_broker.sasl_bootstrap_servers, "--command-config", str(props)]
    code, out, err = run(
        ["alter", *b, "--names", f"user=cfg-{T}", "--add", "request_percentage=7"], capsys
    )
    assert code == 0, err
    assert "request_percentage=7" in describe_until(
        ["describe", *b, "--names", f"user=cfg-{T}"], capsys, "request_percentage"
    )
    props.write_text(props.read_text().replace("alice-secret", "bad-secret"))
    code, out, err = run(["describe", *b], capsys)
    assert code == 1 and "invalid credentials" in err and "bad-secret" not in err + out


def test_control_characters_in_names_are_escaped(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    evil = f"evil-{T}\x1b[31m\n  producer_byte_rate=1"
    code, _, err = run(
        ["alter", *b, "--names", f"user={evil}", "--add", "consumer_byte_rate=3"], capsys
    )
    assert code == 0, err
    out = describe_until(["describe", *b, "--names", f"user={evil}"], capsys, "consumer_byte_rate")
    # Escaped, and quoted: the "=" could otherwise pass for structure.
    assert out == (
        f'{{user="evil-{T}\\x1b[31m\\x0a  producer_byte_rate=1"}}\n  consumer_byte_rate=3\n'
    )


def test_names_that_could_pass_for_others_print_distinctly(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    # The cluster stores names raw: a user literally named <default>, and one whose name
    # reads like a second entity type. Describe text must keep each apart from the real
    # default entity and the real two-part entity.
    b = ["--bootstrap-server", kafka_broker.bootstrap_servers]
    forged = f"u{T}=1,client-id=evil"
    steps = [
        (["--names", f"user={forged.replace(',', chr(92) + ',')}"], "7", f'{{user="{forged}"}}'),
        (["--names", f"user=u{T}=1,client-id=evil"], "8", f'{{user="u{T}=1", client-id=evil}}'),
        (["--names", "user=<default>"], "9", '{user="<default>"}'),
        (["--defaults", "user"], "10", "{user=<default>}"),
    ]
    try:
        for flags, value, shown in steps:
            code, out, err = run(
                ["alter", *b, *flags, "--add", f"request_percentage={value}"], capsys
            )
            assert (code, out) == (0, f"Altered {shown}\n"), err
        lines = [f"{shown}\n  request_percentage={value}\n" for _, value, shown in steps]
        out = describe_until(["describe", *b], capsys, lines)
        for line in lines:
            assert line in out
    finally:
        for flags, _, _ in steps:
            run(["alter", *b, *flags, "--delete", "request_percentage"], capsys)
