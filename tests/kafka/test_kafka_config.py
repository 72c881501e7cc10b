"""Client configuration: Kafka property names, properties files, JAAS lines, and redaction."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kquota.errors import UsageError
from kquota.kafka.config import ClientConfig, parse_jaas_config
from kquota.properties import parse_properties, read_properties
from kquota.secrets import mask
from kquota.target import Target

SECRET = "s3cr3t-Pa55"
SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    f'username="alice" password="{SECRET}";'
)


def test_defaults() -> None:
    c = ClientConfig.from_properties({"bootstrap.servers": "h1:9092, h2:9093"})
    assert c.bootstrap_servers == ("h1:9092", "h2:9093")
    assert c.security_protocol == "PLAINTEXT"
    assert c.client_id == "kquota"
    assert (c.request_timeout_ms, c.retries, c.retry_backoff_ms) == (30000, 5, 100)
    assert c.ssl_check_hostname


def test_sasl_username_password() -> None:
    c = ClientConfig.from_properties(
        {
            "security.protocol": "sasl_ssl",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": SECRET,
            "ssl.ca.location": "/tmp/ca.pem",
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    assert c.security_protocol == "SASL_SSL" and c.uses_sasl and c.uses_ssl
    assert (c.sasl_mechanism, c.sasl_username, c.sasl_password) == (
        "SCRAM-SHA-512",
        "alice",
        SECRET,
    )
    assert c.ssl_ca_location == Path("/tmp/ca.pem")
    assert not c.ssl_check_hostname


def test_jaas_config_from_kafka_tool_file(tmp_path: Path) -> None:
    f = tmp_path / "client.properties"
    f.write_text(
        "# a Kafka tools --command-config file\n"
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="alice" \\\n'
        f'    password="{SECRET}";\n'
    )
    c = ClientConfig.from_properties(read_properties(f))
    assert (c.sasl_username, c.sasl_password) == ("alice", SECRET)


def test_jaas_plain_and_escapes() -> None:
    line = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="bob" password="a\\"b\\\\c";'
    )
    assert parse_jaas_config(line, "PLAIN") == ("bob", 'a"b\\c')
    assert parse_jaas_config(line.replace('"bob"', "bob"), None) == ("bob", 'a"b\\c')


@pytest.mark.parametrize(
    ("line", "mechanism", "message"),
    [
        ("com.example.Login required;", None, "is not supported"),
        (SCRAM_JAAS, "PLAIN", "does not serve PLAIN"),
        ("username=alice", None, "must start with a login module"),
        (
            "org.apache.kafka.common.security.plain.PlainLoginModule required username;",
            None,
            "key=value",
        ),
    ],
)
def test_jaas_errors_never_echo_the_line(line: str, mechanism: str | None, message: str) -> None:
    with pytest.raises(UsageError, match=message) as e:
        parse_jaas_config(line, mechanism)
    assert SECRET not in str(e.value)


def test_properties_format() -> None:
    text = (
        "# comment\n"
        "! also a comment\n"
        "  a = 1\n"
        "b:2\n"
        "c 3\n"
        "d=x\\\n"
        "   y\\\n"
        "   z\n"
        "e\\=f=g\n"
        "h=tab\\there\\u0041\n"
        "i=\n"
        "j=ends with even backslashes\\\\\n"
        "k=next\n"
    )
    assert parse_properties(text) == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "xyz",
        "e=f": "g",
        "h": "tab\thereA",
        "i": "",
        "j": "ends with even backslashes\\",
        "k": "next",
    }


def test_unreadable_properties_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read"):
        read_properties(tmp_path / "missing.properties")


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("ssl.truststore.location", "use ssl.ca.location"),
        ("ssl.keystore.location", "ssl.certificate.location"),
        ("sasl.kerberos.service.name", "GSSAPI"),
    ],
)
def test_java_only_keys(key: str, hint: str) -> None:
    with pytest.raises(UsageError, match=f"{key} is not supported by kquota: .*{hint}"):
        ClientConfig.from_properties({key: "x"})


def test_unknown_key_lists_allowed() -> None:
    with pytest.raises(UsageError, match=r"unknown client property 'foo.bar'; allowed: .*sasl"):
        ClientConfig.from_properties({"foo.bar": "1"})


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"security.protocol": "TLS"}, "security.protocol"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}, "not supported"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.username": "a"}, "needs sasl.username"),
        ({"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER"}, "oauthbearer"),
        ({"ssl.endpoint.identification.algorithm": "ldap"}, "https, none or empty"),
        ({"request.timeout.ms": "soon"}, "whole number"),
        ({"retries": "-1"}, "retries -1: must be a whole number from 0 to 2147483647"),
        ({"bootstrap.servers": "nohost"}, "host:port"),
    ],
)
def test_config_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        ClientConfig.from_properties(props)


def _secret_properties(tmp_path: Path) -> dict[str, str]:
    token_file = tmp_path / "token"
    token_file.write_text(SECRET + "-token\n")
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "alice",
        "sasl.password": SECRET,
        "sasl.oauthbearer.token": SECRET + "-static",
        "ssl.key.password": SECRET + "-key",
    }


def test_repr_and_str_never_show_secrets(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    target = Target.from_options("h:1", None, _secret_properties(tmp_path))
    c = target.config
    caplog.set_level(logging.DEBUG)
    logging.getLogger("kquota.test").info("config %s %r target %r", c, c, target)
    for text in (repr(c), str(c), repr(target), str(target), caplog.text, f"{c}"):
        assert SECRET not in text
    assert "sasl_password='***'" in repr(c)
    assert "alice" in repr(c)


def test_redact_properties() -> None:
    shown = mask({"sasl.password": SECRET, "sasl.jaas.config": SCRAM_JAAS, "client.id": "x"})
    assert shown == {"sasl.password": "***", "sasl.jaas.config": "***", "client.id": "x"}


def test_oauthbearer_token_file_is_reread(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    c = ClientConfig.from_properties(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.token.file": str(token_file),
        }
    )
    assert c.oauthbearer() == "first"
    token_file.write_text("second")
    assert c.oauthbearer() == "second"


def test_cluster_target_merges_flag_over_file(tmp_path: Path) -> None:
    f = tmp_path / "c.properties"
    f.write_text("bootstrap.servers=file:1\nclient.id=from-file\n")
    t = Target.from_options("flag:2", f, {"client.id": "from-yaml", "retries": "1"})
    assert t.bootstrap_servers == ("flag:2",)
    assert (t.config.client_id, t.config.retries) == ("from-file", 1)
    with pytest.raises(UsageError, match="no bootstrap servers"):
        Target.from_options(None, None, {})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a b\n", {"a": "b"}),  # whitespace separates, as Java reads it
        ("a:b\r\nc=d\re=f\n", {"a": "b", "c": "d", "e": "f"}),  # every line ending
        ("a = \\\n  b\\\n  c\n", {"a": "bc"}),  # continuations drop leading whitespace
        ("a=\\u00e9\\u0041\n", {"a": "éA"}),
        ("  # c\n\t! d\na=1\n", {"a": "1"}),
        ("a=\n", {"a": ""}),  # an explicit empty value is a property
        ("a\\ b=c\n", {"a b": "c"}),
        ("a=b\\\\\nc=d\n", {"a": "b\\", "c": "d"}),  # an even run of backslashes ends the line
    ],
)
def test_java_rules(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("a=1\nhunter2\n", 2, "a key with no value"),
        ("a=1\\\n  x\nb=2\nhunter2\n", 4, "a key with no value"),  # lines count continuations
        ("a=1\r\nhunter2\r\n", 2, "a key with no value"),
        ("a=1\nb=pw\\uZZZZ\n", 2, "a malformed \\uXXXX escape"),
    ],
)
def test_a_line_that_cannot_be_a_property_is_named_by_number_only(
    text: str, line: int, problem: str
) -> None:
    with pytest.raises(UsageError) as e:
        parse_properties(text, "c.properties")
    assert str(e.value).startswith(f"c.properties:{line}: {problem}")
    assert "hunter2" not in str(e.value) and "pw" not in str(e.value)
