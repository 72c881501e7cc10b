"""Producers at known rates, for the live usage tests: confluent-kafka producers that send
1,000-byte records on a fixed schedule, as a SASL user or anonymously, each for a bounded time.

The schedule is the rate the test knows; the broker's sensor adds the batch and request
headers it counts on top (docs/usage.md: about 12% for 1,000-byte records sent one a batch).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kquota.devbroker.launcher import BrokerInfo, start_broker, stop_broker
from prometheus_server import RunningPrometheus, running_prometheus

RECORD = 1000
TOPIC = "usage-load"


@dataclass(frozen=True)
class MeteredBroker:
    """MeteredBroker is a dev broker whose quota sensors a real Prometheus scrapes, and the
    folder both run in (:func:`metered_broker`)."""

    broker: BrokerInfo
    prometheus: RunningPrometheus
    folder: Path


@contextlib.contextmanager
def metered_broker(folder: Path, users: Mapping[str, str]) -> Iterator[MeteredBroker]:
    """metered_broker is a fresh dev broker with the JMX exporter (``users`` its SASL users)
    and a real Prometheus scraping it as cluster ``dev``; both stop on leaving."""
    broker = start_broker(
        folder / "broker", metrics=True, extra_users=users, die_with_parent=True, fresh=True
    )
    try:
        assert broker.metrics_address is not None
        with running_prometheus(folder / "prometheus", {"dev": [broker.metrics_address]}) as p:
            yield MeteredBroker(broker, p, folder)
    finally:
        stop_broker(folder / "broker")


def produce(
    broker: BrokerInfo,
    user: str | None,
    client_id: str,
    rate: float,
    seconds: float,
    *,
    drain: bool = True,
) -> int:
    """produce sends ``rate`` bytes/s of 1000-byte records for ``seconds``, as ``user`` over
    SASL/PLAIN (None: anonymous, PLAINTEXT), on a fixed schedule; returns the bytes handed to
    the client. ``drain``: wait until every record is delivered; else drop what a throttled
    principal still holds queued when the time is up (a throttled client's backlog would
    take minutes to drain)."""
    from confluent_kafka import Producer

    conf: dict[str, object] = {
        "bootstrap.servers": broker.bootstrap_servers,
        "client.id": client_id,
        "linger.ms": 0,
    }
    if user is not None:
        conf.update(
            {
                "bootstrap.servers": broker.sasl_bootstrap_servers,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": user,
                "sasl.password": broker.users[user],
            }
        )
    producer = Producer(conf)
    every = RECORD / rate
    began = time.monotonic()
    sent = 0
    while (now := time.monotonic()) - began < seconds:
        due = began + sent / RECORD * every
        if now < due:
            time.sleep(min(due - now, 0.05))
            producer.poll(0)
            continue
        producer.produce(TOPIC, b"x" * RECORD)
        sent += RECORD
        producer.poll(0)
    if drain:
        assert producer.flush(60) == 0
    else:
        producer.purge()
        producer.flush(10)
    return sent


def produce_together(
    broker: BrokerInfo,
    loads: Sequence[tuple[str | None, str, float]],
    seconds: float,
    *,
    drain: bool = True,
) -> None:
    """produce_together runs one :func:`produce` per load (user, client-id, rate) at once."""
    threads = [
        threading.Thread(
            target=produce, args=(broker, user, cid, rate, seconds), kwargs={"drain": drain}
        )
        for user, cid, rate in loads
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
