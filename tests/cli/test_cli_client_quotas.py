"""``kafka-client-quotas``: KIP-546's own examples against the real broker, and its usage rules.

The golden files next to this test are the KIP's describe and resolve examples: entities
``{user=user-one, client-id=my-client}`` and its neighbours, set with the KIP's alter command.
"""

from __future__ import annotations

import secrets
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from kquota.cli.client_quotas import main
from kquota.devbroker.launcher import BrokerInfo

GOLDEN = Path(__file__).parent / "golden"
T = secrets.token_hex(3)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """run runs ``kafka-client-quotas ARGV`` as the console script would."""
    try:
        main(argv)
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def until(argv: list[str], capsys: pytest.CaptureFixture[str], expected: str) -> str:
    """until re-runs a read until it prints ``expected`` (a describe may lag an alter)."""
    deadline = time.monotonic() + 5
    while True:
        code, out, err = run(argv, capsys)
        assert code == 0, err
        if out == expected or time.monotonic() > deadline:
            return out
        time.sleep(0.05)


@pytest.fixture(scope="module")
def server(kafka_broker: BrokerInfo) -> str:
    """server is the KIP's --bootstrap-server flag, after the KIP example's alters: each
    returns normally (exit 0) and, being the KIP's alter, prints nothing."""
    flag = f"--bootstrap-server={kafka_broker.bootstrap_servers}"
    for names, add in [
        (
            "user=user-one,client-id=my-client",
            "consumer_byte_rate=2000000,producer_byte_rate=1000000",
        ),
        ("user=user-one", "request_percentage=50"),
        ("client-id=my-client", "controller_mutation_rate=10"),
    ]:
        main([flag, "--alter", f"--names={names}", f"--add={add}"])
    return flag


@pytest.mark.integration
@pytest.mark.parametrize(
    ("golden", "argv"),
    [
        # describe matches other entity types too; resolve names each value's source
        ("kip546_describe.txt", ["--describe", "--names=client-id=my-client"]),
        ("kip546_resolve.txt", ["--resolve", "--names=user=user-one,client-id=my-client"]),
    ],
    ids=["describe", "resolve"],
)
def test_kip_examples_print_as_the_kip_shows(
    server: str, golden: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (GOLDEN / golden).read_text()
    assert until([server, *argv], capsys, expected) == expected


@pytest.mark.integration
def test_alter_prints_nothing_and_delete_removes(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = f"--bootstrap-server={kafka_broker.bootstrap_servers}"
    names = f"--names=user=kcq-{T},client-id=a\\,b"
    assert run([b, "--alter", names, "--add=producer_byte_rate=1024"], capsys) == (0, "", "")
    shown = f'{{user=kcq-{T}, client-id="a,b"}}\nproducer_byte_rate=1024\n'
    assert until([b, "--describe", f"--names=user=kcq-{T}"], capsys, shown) == shown
    # validate-only: checked by the broker, nothing applied, nothing printed
    code, out, _ = run(
        [b, "--alter", names, "--add=producer_byte_rate=2048", "--validate-only"], capsys
    )
    assert (code, out) == (0, "")
    time.sleep(0.3)
    assert run([b, "--describe", f"--names=user=kcq-{T}"], capsys)[1] == shown
    assert run([b, "--alter", names, "--delete=producer_byte_rate"], capsys) == (0, "", "")
    assert until([b, "--describe", f"--names=user=kcq-{T}"], capsys, "") == ""


@pytest.mark.integration
def test_broker_refusal_is_a_message(
    kafka_broker: BrokerInfo, capsys: pytest.CaptureFixture[str]
) -> None:
    b = f"--bootstrap-server={kafka_broker.bootstrap_servers}"
    code, out, err = run([b, "--alter", "--names=other=x", "--add=producer_byte_rate=1"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("error: {other=x}: ") and "Traceback" not in err


def test_installed_as_its_own_console_script() -> None:
    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts["kafka-client-quotas"] == "kquota.cli.client_quotas:main"
    assert scripts["kquota"] == "kquota.cli.main:entry"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--names=user=a"], "give exactly one of --describe, --resolve, --alter"),
        (["--describe", "--alter"], "give exactly one of --describe, --resolve, --alter"),
        (["--describe", "--add=producer_byte_rate=1"], "go with --alter"),
        (["--resolve"], "--resolve needs the client"),
        (["--resolve", "--defaults=user"], "user is the default entity"),
        (["--resolve", "--names=group=g"], "resolve takes user, client-id and ip; not group"),
        (["--alter", "--names=user=a"], "nothing to alter"),
        (["--alter", "--names=user=a", "--add=producer_byte_rate=1.5"], "whole number"),
        (
            ["--alter", "--names=user=" + "u" * 32768, "--add=producer_byte_rate=1"],
            "longer than the protocol allows",
        ),
        (["--describe"], "no bootstrap servers"),
    ],
)
def test_usage_errors_before_any_connection(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Port 1 is closed: reaching it would be a connection error, not this message.
    server = [] if argv == ["--describe"] else ["--bootstrap-server=127.0.0.1:1"]
    code, out, err = run([*server, *argv], capsys)
    assert (code, out) == (1, "")
    assert message in err, err
