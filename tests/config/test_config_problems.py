"""kquota.yaml's problems read as the desired state's do: ``file:line:column: where: what is
wrong; allowed: …``, every problem at once, in the order of the file, in kquota's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_runner import run_kquota
from kquota.config.project import ConfigError, load_config

# Problems in an order pydantic does not report them in (fields before clusters' contents,
# rollout before a later cluster's line), a union (scope), a nested model, a secret.
BAD = """\
rollout:
  - {clusters: [], max_parallel: 0}
clusters:
  prod:
    capacity: {ingress: fast}
    kafka: {bootstrap.servers: 'x:1', sasl.password: {literal: hunter2}}
    policy:
      scope: 5
      prune: maybe
      max_removals: -1
      max_removal_fraction: two
      mode: watch
      typo: 1
    platform: k8s
  dev:
    desired: quotas
  qa: 3
extra: true
"""


def test_every_problem_with_line_column_and_what_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "kquota.yaml"
    path.write_text(BAD)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    lines = str(err.value).splitlines()
    assert [line.removeprefix(f"{path}:") for line in lines] == [
        "2:16: rollout.0.clusters: the list is empty; allowed: at least 1 item",
        "2:34: rollout.0.max_parallel: 0 is out of range; allowed: a whole number from 1 to 64",
        "5:25: clusters.prod.capacity.ingress: 'fast' is not a byte size; "
        "allowed: bytes per second, e.g. 125000000 or 100MiB/s",
        "6:54: clusters.prod.kafka.sasl.password: the value is not a string; "
        "allowed: a string, number or boolean",
        "8:14: clusters.prod.policy.scope: 5 is not allowed; "
        'allowed: all or a list of matches such as {user: "team-*"}',
        "9:14: clusters.prod.policy.prune: 'maybe' is not true or false; allowed: true, false",
        "10:21: clusters.prod.policy.max_removals: -1 is out of range; "
        "allowed: a whole number at least 0",
        "11:29: clusters.prod.policy.max_removal_fraction: 'two' is not a number; "
        "allowed: a number from 0 to 1",
        "12:13: clusters.prod.policy.mode: 'watch' is not allowed; allowed: manage, observe",
        "13:7: clusters.prod.policy.typo: unknown field 'typo'; allowed: scope, prune, "
        "max_removals, max_removal_fraction, protect, capacity, usage, mode, observe, ramp",
        "14:15: clusters.prod.platform: 'k8s' is not allowed; allowed: kafka, strimzi",
        "16:5: clusters.dev: missing field 'kafka' (required)",
        "16:14: clusters.dev.desired: 'quotas' is not a list; "
        "allowed: a list ([a, b] or one '- item' a line)",
        "17:7: clusters.qa: 3 is not a mapping; allowed: a mapping of fields kafka, desired, "
        "audit_topic, audit_signing, policy, capacity, quota_window, platform, "
        "strimzi_quotas_type, kafka_users",
        "18:1: extra: unknown field 'extra'; allowed: clusters, rollout",
    ]
    text = str(err.value)
    for pydantic_words in ("Input should", "Value error", "literal[", "list[", "Field required"):
        assert pydantic_words not in text
    assert "hunter2" not in text


def test_a_problem_inside_a_scope_list_is_the_one_said(tmp_path: Path) -> None:
    """scope is "all" or a list: a wrong entry is reported there, not as "not 'all'"."""
    path = tmp_path / "kquota.yaml"
    path.write_text("clusters:\n  a:\n    kafka: {bootstrap.servers: x}\n    policy:\n"
                    "      scope: [{user: [a]}]\n")  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == (
        f"{path}:5:22: clusters.a.policy.scope.0.user: a list is not a string; allowed: a string"
    )


def test_the_cli_says_them_once_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "kquota.yaml").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_kquota(["plan", "--cluster", "prod", "--snapshot", "s.json"], capsys)
    assert code == 1 and out == ""
    first = f"error: {tmp_path / 'kquota.yaml'}:2:16: rollout.0.clusters: the list is empty"
    assert err.startswith(first)
    assert len(err.splitlines()) == 15 and "Traceback" not in err
