"""One Target for every command and program: how options combine, what it reads, and when."""

from __future__ import annotations

from pathlib import Path

import pytest

from kquota.errors import UsageError
from kquota.model import Entity
from kquota.policy import Policy
from kquota.snapshot.files import dump_snapshot
from kquota.target import Target

CONFIG = """\
clusters:
  prod:
    kafka:
      bootstrap.servers: prod-1:9093
      sasl.password: ${KQUOTA_TEST_UNSET_SECRET}
    desired: [quotas/prod]
    policy: {prune: true}
"""


def test_snapshot_and_bootstrap_server_exclude_each_other(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="exclude each other"):
        Target.resolve(snapshot=tmp_path / "s.json", bootstrap_server="h:1", config_path=None)


def test_the_single_configured_cluster_is_used_without_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kquota.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    target = Target.resolve()
    assert target.label == "prod"
    assert target.policy(prune=None, allow_mass_removal=False).prune is True
    assert target.desired_paths() == [tmp_path / "quotas" / "prod"]


def test_a_cluster_of_a_config_read_already_is_the_one_cluster_name_resolves(
    tmp_path: Path,
) -> None:
    from kquota.config.project import ConfigError, load_config

    (tmp_path / "kquota.yaml").write_text(CONFIG)
    config = load_config(tmp_path / "kquota.yaml")
    resolved = Target.resolve(cluster_name="prod", config_path=tmp_path / "kquota.yaml")
    assert Target.of_config(config, "prod") == resolved
    with pytest.raises(ConfigError, match=r"no cluster named 'eu-1' \(clusters: prod\)"):
        Target.of_config(config, "eu-1")


def test_a_snapshot_target_reads_no_secret_until_it_goes_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kquota.yaml").write_text(CONFIG)
    snapshot = tmp_path / "s.json"
    snapshot.write_bytes(dump_snapshot({Entity.of({"user": "a"}): {"request_percentage": 5.0}}))
    monkeypatch.chdir(tmp_path)
    target = Target.resolve(snapshot=snapshot, cluster_name="prod")
    state, origin = target.load_state_and_origin()  # offline: the unset ${VAR} is not read
    assert state == {Entity.of({"user": "a"}): {"request_percentage": 5.0}}
    assert origin.cluster == "prod"
    with pytest.raises(Exception, match="KQUOTA_TEST_UNSET_SECRET"):
        target.client_properties()


def test_properties_merge_lowest_first_and_repr_masks_secrets(tmp_path: Path) -> None:
    props_file = tmp_path / "c.properties"
    props_file.write_text("client.id=from-file\nsasl.password=file-secret\n")
    target = Target.from_options("flag:2", props_file, {"client.id": "own", "retries": "1"})
    merged = target.client_properties()
    assert merged["bootstrap.servers"] == "flag:2"
    assert (merged["client.id"], merged["retries"]) == ("from-file", "1")
    assert target.bootstrap_servers == ("flag:2",)
    assert "file-secret" not in repr(target)


def test_a_live_target_needs_bootstrap_servers() -> None:
    with pytest.raises(UsageError, match="no bootstrap servers"):
        Target.live({})


def test_a_program_target_is_labelled_and_planned_under_its_policy() -> None:
    policy = Policy.build([{"user": "team-*"}], prune=True)
    target = Target.live({"bootstrap.servers": "h:1"}, policy=policy)
    assert target.label == "h:1"
    planned = target.policy(prune=None, allow_mass_removal=True)
    assert planned.prune and planned.allow_mass_removal
    assert not planned.in_scope(Entity.of({"user": "other"}))
    assert target.policy(prune=False, allow_mass_removal=False).prune is False


TWO = """\
clusters:
  prod:
    kafka:
      bootstrap.servers: Broker-1.example:9093,broker-2.example:9093
      sasl.password: ${KQUOTA_TEST_UNSET_SECRET}
    policy: {mode: observe, protect: [{user: svc-*}], ramp: {max_step: 0.5}}
  staging:
    kafka: {bootstrap.servers: "staging-1:9092"}
"""


@pytest.mark.parametrize(
    "servers",
    [
        "broker-2.example:9093,broker-1.example:9093",  # order
        " BROKER-1.example:9093 , broker-2.EXAMPLE:9093 ,broker-1.example:9093",  # case, dupes
    ],
)
def test_bootstrap_servers_of_a_configured_cluster_are_that_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: str
) -> None:
    (tmp_path / "kquota.yaml").write_text(TWO)
    monkeypatch.chdir(tmp_path)
    target = Target.resolve(bootstrap_server=servers)
    assert target.label == "prod" and target.unmatched is None
    policy = target.policy(prune=None, allow_mass_removal=False)
    assert policy.observe and [m.to_data() for m in policy.protect] == [{"user": "svc-*"}]
    assert target.cluster is not None and target.cluster.policy.ramp is not None
    # the flags connect: the cluster's ${VAR} secret is not asked for
    assert target.client_properties() == {"bootstrap.servers": servers}


def test_servers_of_no_cluster_are_said_so_and_of_two_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kquota.yaml").write_text(TWO)
    monkeypatch.chdir(tmp_path)
    other = Target.resolve(bootstrap_server="broker-1.example:9093")  # a subset is not it
    assert other.cluster is None and other.unmatched is not None
    assert other.unmatched.startswith("--bootstrap-server 'broker-1.example:9093' is none of")
    (tmp_path / "kquota.yaml").write_text(
        TWO + '  copy:\n    kafka: {bootstrap.servers: "staging-1:9092"}\n'
    )
    with pytest.raises(UsageError, match="servers of clusters copy and staging in .*guess"):
        Target.resolve(bootstrap_server="staging-1:9092")
    # Named as one cluster with another's servers: one cluster, one policy.
    with pytest.raises(UsageError, match="--cluster staging: .* those of cluster prod"):
        Target.resolve(cluster_name="staging", bootstrap_server="broker-1.example:9093,"
                       "broker-2.example:9093")  # fmt: skip


def test_a_program_reaching_a_configured_cluster_gets_its_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kquota.yaml").write_text(TWO)
    monkeypatch.chdir(tmp_path)
    servers = {"bootstrap.servers": "broker-2.example:9093,broker-1.example:9093"}
    by_servers = Target.live(servers, policy=Policy())
    assert by_servers.label == "prod"
    assert by_servers.policy(prune=None, allow_mass_removal=False).observe
    by_name = Target.live({"bootstrap.servers": "tunnel:1"}, name="prod")
    assert by_name.policy(prune=None, allow_mass_removal=False).observe
