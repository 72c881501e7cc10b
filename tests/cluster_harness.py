"""The session's three-node cluster, as tests drive it: nodes by id, crashes and restarts.

Restarts must run on the main thread: the test JVMs get PR_SET_PDEATHSIG, which fires when
the *thread* that started them ends, so a node restarted from a helper thread would die with
that thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from kquota.devbroker.cluster import node_dir, node_info, quorum_leader
from kquota.devbroker.launcher import BrokerInfo, broker_status, kill_broker, start_broker
from kquota.kafka.admin import WireAdmin
from kquota.model import QuotaState

NODE_IDS = (1, 2, 3)


@dataclass
class ThreeNodes:
    dir: Path
    info: BrokerInfo
    kafka_version: str

    def node(self, node_id: int) -> BrokerInfo:
        """node is one node's JSON line: its own listeners only."""
        return node_info(self.dir, node_id)

    def address(self, node_id: int) -> str:
        return self.node(node_id).bootstrap_servers

    def tool_target(self, node_id: int) -> BrokerInfo:
        """tool_target points Kafka's tools at one node alone."""
        node = self.node(node_id)
        return replace(self.info, bootstrap_servers=node.bootstrap_servers)

    def running(self, node_id: int) -> bool:
        return broker_status(node_dir(self.dir, node_id)) is not None

    def kill(self, node_id: int) -> None:
        assert kill_broker(node_dir(self.dir, node_id)), f"node {node_id} was not running"

    def restart(self, node_id: int) -> None:
        start_broker(
            node_dir(self.dir, node_id), kafka_version=self.kafka_version, die_with_parent=True
        )

    def leader(self) -> int:
        deadline = time.monotonic() + 30
        while (leader := quorum_leader(self.dir)) is None:
            assert time.monotonic() < deadline, "no quorum leader recorded"
            time.sleep(0.2)
        return leader

    def heal(self, timeout: float = 60.0) -> None:
        """heal restarts every node that is down and waits until each lists all three."""
        for node_id in NODE_IDS:
            if not self.running(node_id):
                self.restart(node_id)
        deadline = time.monotonic() + timeout
        for node_id in NODE_IDS:
            while True:
                with WireAdmin(self.address(node_id)) as admin:
                    admin.describe_all()
                    if len(admin.brokers) == len(NODE_IDS):
                        break
                assert time.monotonic() < deadline, f"node {node_id} does not see all nodes"
                time.sleep(0.5)

    def state_at(self, node_id: int, prefix: str) -> QuotaState:
        """state_at is what one node alone answers, the entities named with ``prefix``."""
        with WireAdmin(self.address(node_id)) as admin:
            return {
                e: v
                for e, v in admin.describe_all().items()
                if any(n is not None and n.startswith(prefix) for _, n in e.parts)
            }
