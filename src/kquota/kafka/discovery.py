"""Which brokers a client may use: the bootstrap addresses, and what Metadata says.

Decisions:

* **Learned on every (re)connect.** After a connection opens, one Metadata request (highest
  version both sides speak, as the Java client negotiates; no topics) lists the live brokers
  with the addresses they advertise on the listener we reached. Asking again after every
  reconnect keeps the list current as brokers come and go; between reconnects nothing
  needs it.
* **Failover order.** The learned brokers in id order, then bootstrap addresses not among
  them; the address whose connection just died goes last (it may come back, but trying it
  first would waste a connect on a dead broker, or a whole connect timeout on a black hole).
* **Never required.** A broker without Metadata (none exists that has the quota APIs, but
  the check is cheap) leaves the bootstrap list as the only one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kquota.kafka.conn import BrokerConnection
from kquota.kafka.errors import UnsupportedVersionError
from kquota.kafka.protocol import METADATA

NO_TOPICS_REQUEST: dict[str, Any] = {
    # From v1 an empty list asks for no topics (v0 would read it as all: harmless, never used).
    "Topics": [],
    "AllowAutoTopicCreation": False,
    "IncludeClusterAuthorizedOperations": False,
    "IncludeTopicAuthorizedOperations": False,
}


def join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def brokers_of(body: dict[str, Any]) -> list[str]:
    """brokers_of lists a Metadata response's brokers as ``host:port``, in broker-id order."""
    if body.get("ErrorCode"):
        return []
    brokers = sorted(body["Brokers"], key=lambda b: b["NodeId"])
    return [join_host_port(b["Host"], b["Port"]) for b in brokers]


async def live_brokers(conn: BrokerConnection) -> list[str]:
    """live_brokers asks ``conn``'s broker for the cluster's live brokers ([] if it can't say)."""
    try:
        version = conn.version_for(METADATA)
    except UnsupportedVersionError:
        return []
    return brokers_of(await conn.request(METADATA, NO_TOPICS_REQUEST, version=version))


class BrokerSet:
    """BrokerSet is the bootstrap list plus the brokers last learned from Metadata."""

    def __init__(self, bootstrap: Sequence[str]) -> None:
        self.bootstrap = tuple(bootstrap)
        self.learned: tuple[str, ...] = ()

    def learn(self, brokers: Sequence[str]) -> None:
        if brokers:
            self.learned = tuple(brokers)

    def candidates(self, failed: str | None = None) -> list[str]:
        """candidates is the order to try addresses in, ``failed`` (just lost) last."""
        order = list(dict.fromkeys([*self.learned, *self.bootstrap]))
        if failed in order:
            order.remove(failed)
            order.append(failed)
        return order
