"""kquota.yaml: validation with file:line, env interpolation, masking, policy."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from kquota.config.project import ConfigError, find_config, load_config
from kquota.model import Entity

GOOD = """\
clusters:
  prod:
    kafka:
      bootstrap.servers: broker-1:9093
      security.protocol: SASL_SSL
      sasl.username: kquota
      sasl.password: ${KQ_TEST_PASSWORD}
      ssl.key.password: literal-secret
      request.timeout.ms: 30000
      enable.idempotence: false
    desired: [quotas/base, quotas/prod]
    audit_topic: kquota-audit
    policy:
      scope: [{user: "team-*"}, {ip: "*"}]
      prune: true
      max_removals: 5
  dev:
    kafka: {bootstrap.servers: localhost:9092}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kquota.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_loads_clusters_paths_and_policy(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    prod = config.cluster("prod")
    assert prod.desired_paths() == [tmp_path / "quotas/base", tmp_path / "quotas/prod"]
    assert prod.audit_topic == "kquota-audit"
    policy = prod.policy.to_policy()
    assert policy.prune and policy.max_removals == 5 and policy.max_removal_fraction == 0.3
    assert policy.in_scope(Entity.of({"user": "team-a"}))
    assert not policy.in_scope(Entity.of({"user": "alice"}))
    assert not prod.policy.to_policy(prune=False).prune
    dev = config.cluster("dev")
    assert dev.desired_paths() == [tmp_path / "quotas"]
    assert dev.policy.to_policy().prune is False and dev.policy.to_policy().scope is None


def test_env_interpolation_and_missing_variable(tmp_path: Path) -> None:
    prod = load_config(write(tmp_path, GOOD)).cluster("prod")
    props = prod.client_properties({"KQ_TEST_PASSWORD": "s3cret"})
    assert props["sasl.password"] == "s3cret"
    assert props["request.timeout.ms"] == "30000"
    assert props["enable.idempotence"] == "false"
    with pytest.raises(ConfigError) as err:
        prod.client_properties({})
    assert str(err.value) == (
        f"{tmp_path / 'kquota.yaml'}:7: environment variable KQ_TEST_PASSWORD is not set "
        "(used by sasl.password)"
    )


def test_dollar_escape(tmp_path: Path) -> None:
    path = write(tmp_path, "clusters:\n  a:\n    kafka: {bootstrap.servers: 'x', p: 'a$${B}'}\n")
    assert load_config(path).cluster("a").client_properties({})["p"] == "a${B}"


def test_repr_masks_secrets(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    text = repr(config) + str(config.cluster("prod"))
    assert "literal-secret" not in text and "KQ_TEST_PASSWORD" not in text
    assert "'sasl.password': '***'" in text and "'ssl.key.password': '***'" in text
    assert "broker-1:9093" in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n    prnue: true\n",
            ":4:5: clusters.a.prnue: unknown field 'prnue'; allowed: kafka, desired,",
        ),
        (
            "clusters:\n  a:\n    kafka: {sasl.username: x}\n",
            ":3:12: clusters.a.kafka: kafka properties need bootstrap.servers",
        ),
        (
            "clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n    policy:\n      prune: maybe\n",
            ":5:14: clusters.a.policy.prune: 'maybe' is not true or false; allowed: true, false",
        ),
        (
            "clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n"
            "    policy: {scope: [{team: x}]}\n",
            "unknown entity type(s) ['team']",
        ),
        (
            "clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n"
            "    policy: {max_removal_fraction: 2}\n",
            ":4:36: clusters.a.policy.max_removal_fraction: 2 is out of range; "
            "allowed: a number from 0 to 1",
        ),
        (
            "clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n"
            "  a:\n    kafka: {bootstrap.servers: y}\n",
            ":4:3: duplicate key 'a'",
        ),
        ("clusters: [\n", "invalid YAML"),
        ("", ":1:1: empty config"),
        (
            "clusters:\n  a:\n    desired: []\n    kafka: {bootstrap.servers: x}\n",
            ":3:14: clusters.a.desired: desired needs at least one path",
        ),
    ],
)
def test_errors_have_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_unknown_cluster_and_find(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, GOOD)
    with pytest.raises(ConfigError, match="no cluster named 'qa' \\(clusters: dev, prod\\)"):
        load_config(path).cluster("qa")
    monkeypatch.chdir(tmp_path)
    assert find_config() == tmp_path / "kquota.yaml"
    (tmp_path / "sub").mkdir()
    assert find_config(tmp_path / "sub") is None


SIGNING = """\
clusters:
  prod:
    kafka: {bootstrap.servers: 'b:9092'}
    audit_signing:
      key_id: k2
      keys: {k1: '${KQ_AUDIT_K1}', k2: '${KQ_AUDIT_K2}'}
"""


def test_audit_signing_keys_come_from_the_environment(tmp_path: Path) -> None:
    prod = load_config(write(tmp_path, SIGNING)).cluster("prod")
    env = {"KQ_AUDIT_K1": "a" * 32, "KQ_AUDIT_K2": "b" * 40}
    keys = prod.audit_keys(env)
    assert keys is not None and keys.signing == "k2" and keys.ids == ("k1", "k2")
    assert keys.keys["k2"] == b"b" * 40
    text = repr(load_config(write(tmp_path, SIGNING))) + repr(keys)
    assert "a" * 32 not in text and "KQ_AUDIT_K1" not in text
    with pytest.raises(ConfigError) as err:
        prod.audit_keys({"KQ_AUDIT_K1": "a" * 32})
    assert "environment variable KQ_AUDIT_K2 is not set (audit signing key 'k2')" in str(err.value)
    with pytest.raises(ConfigError) as err:
        prod.audit_keys({"KQ_AUDIT_K1": "a" * 32, "KQ_AUDIT_K2": "short-secret"})
    assert "key 'k2' is 12 bytes long; at least 32 are needed" in str(err.value)
    assert "short-secret" not in str(err.value)


@pytest.mark.parametrize(
    ("signing", "message"),
    [
        (
            "{key_id: k1, keys: {k1: 'a-literal-key-a-literal-key-a-literal-key'}}",
            "give the key as ${VAR}",
        ),
        ("{key_id: k3, keys: {k1: '${K1}'}}", "key_id 'k3' is not one of its keys (k1)"),
        ("{key_id: 'k 1', keys: {k1: '${K1}'}}", "allowed are 1 to 64 ASCII letters"),
        ("{key_id: k1, keys: {}}", "at least 1 item"),
    ],
)
def test_audit_signing_is_checked_with_file_and_line(
    tmp_path: Path, signing: str, message: str
) -> None:
    text = f"clusters:\n  a:\n    kafka: {{bootstrap.servers: x}}\n    audit_signing: {signing}\n"
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text))
    assert re.search(r"kquota\.yaml:4:\d+: clusters\.a\.audit_signing", str(err.value))
    assert message in str(err.value) and "a-literal-key" not in str(err.value)
