"""Broker discovery: the failover order (pure) and what Metadata says on a real cluster."""

from __future__ import annotations

from cluster_harness import NODE_IDS, ThreeNodes
from kquota.kafka.admin import WireAdmin
from kquota.kafka.discovery import BrokerSet, brokers_of, join_host_port


def test_failover_order_puts_learned_brokers_first_and_the_failed_one_last() -> None:
    brokers = BrokerSet(["seed:9092", "b:9092"])
    assert brokers.candidates() == ["seed:9092", "b:9092"]
    brokers.learn(["a:9092", "b:9092", "c:9092"])
    assert brokers.candidates() == ["a:9092", "b:9092", "c:9092", "seed:9092"]
    assert brokers.candidates("a:9092") == ["b:9092", "c:9092", "seed:9092", "a:9092"]
    brokers.learn([])  # a broker that could not say keeps the last list
    assert brokers.learned == ("a:9092", "b:9092", "c:9092")


def test_metadata_brokers_in_id_order_with_ipv6_bracketed() -> None:
    body = {
        "Brokers": [
            {"NodeId": 3, "Host": "::1", "Port": 9094, "Rack": None},
            {"NodeId": 1, "Host": "kafka-1", "Port": 9092, "Rack": "r"},
        ],
        "ErrorCode": 0,
    }
    assert brokers_of(body) == ["kafka-1:9092", "[::1]:9094"]
    assert brokers_of({**body, "ErrorCode": 5}) == []
    assert join_host_port("127.0.0.1", 1) == "127.0.0.1:1"


def test_one_bootstrap_address_learns_every_node(three_nodes: ThreeNodes) -> None:
    every = sorted(three_nodes.address(i) for i in NODE_IDS)
    for node_id in NODE_IDS:
        with WireAdmin(three_nodes.address(node_id)) as admin:
            assert admin.brokers == ()
            admin.describe_all()
            assert sorted(admin.brokers) == every
            assert admin.connected_to == three_nodes.address(node_id)
            assert len(admin.describe_each_broker()) == 3


def test_describes_carry_on_at_another_node_when_the_one_in_use_dies(
    three_nodes: ThreeNodes,
) -> None:
    with WireAdmin(three_nodes.address(3)) as admin:
        before = admin.describe_all()
        three_nodes.kill(3)  # the fixture restarts it
        assert admin.describe_all() == before
        assert admin.connected_to in (three_nodes.address(1), three_nodes.address(2))
        assert len(admin.describe_each_broker()) == 2, "the dead node is left out"
