"""Canary secrets through every error path: they never reach any output (issue 19, item 1).

Each case plants a canary where a secret can stand — a client properties file read by
Java's rules, a bootstrap address's user information, a ``${VAR}`` of kquota.yaml that lands
in a non-secret property, a token file — and runs every command that reads client
properties, in text, JSON, markdown and prometheus, with and without ``--out``. The canary
must appear nowhere: not in stdout, not in stderr, not in any file the run wrote. A
``FakeListener`` (from ``test_cli_apply``) stands where the cluster would be, so the paths
that connect and fail are swept too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from test_cli_apply import HEADER, FakeListener, fake_listener  # noqa: F401 (fixture)

from cli_runner import run_kquota

CANARY = "Cnry7Zx9QpW"
ADDR = "ADDR"  # replaced by the fake listener's address

COMMANDS: dict[str, list[str]] = {
    "plan-text": ["plan", "quotas"],
    "plan-json-out": ["plan", "quotas", "--format", "json", "--out", "out/plan.json"],
    "plan-markdown": ["plan", "quotas", "--format", "markdown"],
    "drift-json-out": ["drift", "quotas", "--format", "json", "--out", "out/drift.json"],
    "drift-prometheus": ["drift", "quotas", "--format", "prometheus", "--out", "out/d.prom"],
    "export-out": ["export", "--out", "out/export.yaml"],
    "snapshot-out": ["snapshot", "--out", "out/snap.json"],
    "resolve-json": ["resolve", "--names", "user=alice", "--format", "json"],
    "apply": ["apply", "quotas", "--auto-approve"],
    "describe-json": ["describe", "--format", "json"],
}
NEEDS_BOOTSTRAP_FLAG = {"describe-json"}  # describe has no --cluster


@dataclass(frozen=True)
class Case:
    """Case is one place a secret stands: a properties file, kquota.yaml's kafka map (with
    ``env``), or the address flag."""

    properties: str | None = None
    kafka: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    bootstrap_flag: str | None = None
    files: dict[str, str] = field(default_factory=dict)


def _props(text: str) -> Case:
    return Case(properties=text)


def _var(prop: str, value: str, **extra: str) -> Case:
    return Case(kafka={prop: value, **extra}, env={"KQUOTA_PROD_PASSWORD": CANARY})


SASL = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.username=alice\n"

CASES: dict[str, Case] = {
    # A properties file read by Java's rules, with the password where it does not belong.
    "password-on-next-line": _props(f"{SASL}sasl.password=\n  {CANARY}\n"),
    "stray-password-line": _props(f"{SASL}sasl.password=x\n{CANARY}\n"),
    "stray-password-with-space": _props(f"{SASL}sasl.password=x\n{CANARY} {CANARY}\n"),
    "stray-password-lowercase": _props(f"{SASL}sasl.password=x\n{CANARY.lower()}=y\n"),
    "space-separator-connects": _props(f"{SASL}sasl.password {CANARY}\n"),
    "continued-password": _props(f"{SASL}sasl.password={CANARY[:4]}\\\n   {CANARY[4:]}\n"),
    "malformed-u-escape": _props(f"{SASL}sasl.password={CANARY}\\uZZZZ\n"),
    "jaas-broken": _props(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{CANARY}" broken\n'
    ),
    # User information in an address.
    "userinfo-kafka-url": Case(bootstrap_flag=f"kafka://alice:{CANARY}@127.0.0.1:9092"),
    "userinfo-listener-url": Case(bootstrap_flag=f"SASL_SSL://alice:{CANARY}@127.0.0.1:9092"),
    "userinfo-bare": Case(bootstrap_flag=f"alice:{CANARY}@127.0.0.1:9092"),
    "userinfo-in-yaml": Case(kafka={"bootstrap.servers": f"kafka://u:{CANARY}@127.0.0.1:9"}),
    # A ${VAR} that holds a secret, landing in a property that is not one.
    "var-security-protocol": _var("security.protocol", "${KQUOTA_PROD_PASSWORD}"),
    "var-sasl-mechanism": _var(
        "sasl.mechanism", "${KQUOTA_PROD_PASSWORD}", **{"security.protocol": "SASL_PLAINTEXT"}
    ),
    "var-bootstrap": _var("bootstrap.servers", "${KQUOTA_PROD_PASSWORD}"),
    "var-bootstrap-refused": Case(
        kafka={"bootstrap.servers": "${KQUOTA_PROD_PASSWORD}"},
        env={"KQUOTA_PROD_PASSWORD": "localhost:1"},
    ),
    "var-bootstrap-port": _var("bootstrap.servers", "h-${KQUOTA_PROD_PASSWORD}:99999"),
    "var-retries": _var("retries", "${KQUOTA_PROD_PASSWORD}"),
    "var-request-timeout": _var("request.timeout.ms", "${KQUOTA_PROD_PASSWORD}"),
    "var-ca-location": _var(
        "ssl.ca.location", "/x/${KQUOTA_PROD_PASSWORD}", **{"security.protocol": "SSL"}
    ),
    "var-endpoint-identification": _var(
        "ssl.endpoint.identification.algorithm", "${KQUOTA_PROD_PASSWORD}"
    ),
    "var-certificate": _var(
        "ssl.certificate.location", "/x/${KQUOTA_PROD_PASSWORD}", **{"security.protocol": "SSL"}
    ),
    "var-token-file-path": _var(
        "sasl.oauthbearer.token.file",
        "/x/${KQUOTA_PROD_PASSWORD}",
        **{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER"},
    ),
    "var-username-connects": _var(
        "sasl.username",
        "${KQUOTA_PROD_PASSWORD}",
        **{"security.protocol": "SASL_PLAINTEXT", "sasl.password": "pw"},
    ),
    # A token file's content.
    "token-file-connects": Case(
        kafka={
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.file": "token.txt",
        },
        files={"token.txt": f"{CANARY}\n"},
    ),
}


def _setup(case: Case, root: Path, listener: FakeListener, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    (root / "quotas").mkdir()
    (root / "quotas" / "main.yaml").write_text(
        HEADER + "  - {match: {user: alice}, set: {producer_byte_rate: 1MiB}}\n"
    )
    (root / "out").mkdir()
    kafka = {"bootstrap.servers": listener.address, "retries": "0", **case.kafka}
    lines = "".join(f"      {k}: '{v}'\n" for k, v in kafka.items())
    (root / "kquota.yaml").write_text(f"clusters:\n  c:\n    kafka:\n{lines}")
    if case.properties is not None:
        (root / "client.properties").write_text(case.properties)
    for name, text in case.files.items():
        (root / name).write_text(text)


def _argv(command: str, case: Case, listener: FakeListener) -> list[str]:
    argv = [*COMMANDS[command], "--timeout", "5s"]
    if case.bootstrap_flag is not None:
        return [*argv, "--bootstrap-server", case.bootstrap_flag]
    if case.properties is not None or command in NEEDS_BOOTSTRAP_FLAG:
        flags = ["--bootstrap-server", listener.address]
        if case.properties is not None:
            flags += ["--command-config", "client.properties"]
        return [*argv, *flags]
    return [*argv, "--cluster", "c"]


def _written(root: Path) -> dict[str, str]:
    inputs = {"kquota.yaml", "client.properties", "token.txt"}
    return {
        str(p.relative_to(root)): p.read_text(errors="replace")
        for p in root.rglob("*")
        if p.is_file() and p.name not in inputs
    }


# describe takes no --cluster (it reads no kquota.yaml): a kquota.yaml-only case has no path
# into it, so the pair is not generated rather than skipped.
PAIRS = [
    (case_name, command)
    for command in COMMANDS
    for case_name, case in CASES.items()
    if not (command in NEEDS_BOOTSTRAP_FLAG and case.kafka and case.properties is None)
]


@pytest.mark.parametrize(("case_name", "command"), PAIRS)
def test_a_canary_secret_never_reaches_any_output(
    case_name: str,
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = CASES[case_name]
    _setup(case, tmp_path, fake_listener, monkeypatch)
    code, out, err = run_kquota(_argv(command, case, fake_listener), capsys)
    assert code != 0, (out, err)
    assert "Traceback" not in err, err
    secret = {"var-bootstrap": fake_listener.address, "var-bootstrap-refused": "localhost:1"}.get(
        case_name, CANARY
    )
    if case_name == "var-bootstrap":  # the ${VAR} holds the (working) address itself
        monkeypatch.setenv("KQUOTA_PROD_PASSWORD", secret)
        code, out, err = run_kquota(_argv(command, case, fake_listener), capsys)
        assert code != 0 and "Traceback" not in err, err
    for where, text in {"stdout": out, "stderr": err, **_written(tmp_path)}.items():
        assert secret.lower() not in text.lower(), (where, text)
        assert secret[2:-2].lower() not in text.lower(), (where, text)  # no part of it either


@pytest.mark.parametrize(
    ("case_name", "message"),
    [
        ("password-on-next-line", "client.properties:5: a key with no value cannot be a client"),
        ("stray-password-line", "client.properties:5: a key with no value cannot be a client"),
        ("stray-password-with-space", "client.properties:5: a client property name that is no"),
        ("malformed-u-escape", "client.properties:4: a malformed \\uXXXX escape"),
        ("userinfo-kafka-url", "bootstrap server 'kafka://***@127.0.0.1:9092' holds user info"),
        ("userinfo-listener-url", "'SASL_SSL://***@127.0.0.1:9092' holds user information"),
        ("userinfo-bare", "bootstrap server '***@127.0.0.1:9092' holds user information"),
        ("var-security-protocol", "security.protocol (from ${KQUOTA_PROD_PASSWORD}) is not one"),
        ("var-sasl-mechanism", "sasl.mechanism (from ${KQUOTA_PROD_PASSWORD}) is not supported"),
        ("var-bootstrap-port", "bootstrap.servers (from ${KQUOTA_PROD_PASSWORD}) entry 1 is not"),
        ("var-retries", "retries (from ${KQUOTA_PROD_PASSWORD}): must be a whole number from 0"),
        ("var-ca-location", "ssl.ca.location (from ${KQUOTA_PROD_PASSWORD}): cannot load CAs"),
        ("var-endpoint-identification", "algorithm (from ${KQUOTA_PROD_PASSWORD}): must be https"),
    ],
)
def test_the_message_names_the_property_and_the_variable(
    case_name: str,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake_listener: FakeListener,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = CASES[case_name]
    _setup(case, tmp_path, fake_listener, monkeypatch)
    code, _, err = run_kquota(_argv("plan-text", case, fake_listener), capsys)
    assert code == 1 and message in err, err
    if "from ${" in message:
        assert "kquota.yaml:" in err  # where the property stands, too


def test_java_rules_read_a_space_separated_password(tmp_path: Path) -> None:
    from kquota.properties import read_properties

    path = tmp_path / "c.properties"
    path.write_text(f"sasl.password {CANARY}\nsasl.username:alice\n# sasl.x=y\n! z\n")
    assert read_properties(path) == {"sasl.password": CANARY, "sasl.username": "alice"}
