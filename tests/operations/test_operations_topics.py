"""The ``kquota topics create`` line a refusal names: the cluster as the command reached it."""

from __future__ import annotations

from pathlib import Path

from kquota.operations.topics import create_command
from kquota.target import Target


def test_a_named_cluster_is_named_and_its_own_audit_topic_is_not_repeated() -> None:
    from kquota.config.project import ClusterConfig

    cluster = ClusterConfig.model_validate(
        {"kafka": {"bootstrap.servers": "k:9092"}, "audit_topic": "trail"}
    )
    target = Target(cluster_name="prod", cluster=cluster)
    assert create_command(target) == "kquota topics create --cluster prod"
    assert create_command(target, "trail") == "kquota topics create --cluster prod"
    assert create_command(target, "other") == (
        "kquota topics create --cluster prod --audit-topic other"
    )


def test_servers_given_on_the_command_line_are_given_again_quoted_for_a_shell() -> None:
    target = Target(bootstrap_server="a:9092,b:9092", command_config=Path("my client.properties"))
    assert create_command(target, "audit") == (
        "kquota topics create --bootstrap-server a:9092,b:9092 "
        "--command-config 'my client.properties' --audit-topic audit"
    )


def test_a_cluster_found_by_its_servers_is_reached_by_them_again() -> None:
    """Named by --bootstrap-server though kquota.yaml knows it (its policy applies, its
    client properties do not): the command gives the same servers, not --cluster."""
    from kquota.config.project import ClusterConfig

    cluster = ClusterConfig.model_validate({"kafka": {"bootstrap.servers": "k:9092"}})
    target = Target(
        bootstrap_server="k:9092", cluster_name="prod", cluster=cluster, policy_only=True
    )
    assert create_command(target) == "kquota topics create --bootstrap-server k:9092"
