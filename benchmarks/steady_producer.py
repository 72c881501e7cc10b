"""A steady producer for the broker-cost benchmark (issue 34, part 4).

Sends ``--rate`` messages a second of ``--size`` bytes (``acks=all``) to ``--topic`` on
``--bootstrap-server`` until SIGTERM, then waits for every delivery and prints one JSON line:
the latency of each message from ``produce()`` to its delivery callback, in milliseconds
(count, failed, p50, p99, max), the rate it reached and the seconds it ran. Paced against a
fixed schedule, so a stall shows as latency, not as fewer messages. Prints ``ready`` on stderr
once its first message is delivered. A separate process, so that the benchmark's own Python
work does not share its interpreter lock.

Usage: ``python benchmarks/steady_producer.py --bootstrap-server BS --topic T [--rate 2000]
[--size 1024]``
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections.abc import Callable
from types import FrameType

from confluent_kafka import KafkaError, Message, Producer


def percentile(sorted_values: list[float], q: float) -> float:
    """percentile is the nearest-rank ``q`` percentile (0-100) of ``sorted_values``."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, int(-(-q * len(sorted_values) // 100)) - 1))
    return sorted_values[rank]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--rate", type=int, default=2000)
    parser.add_argument("--size", type=int, default=1024)
    args = parser.parse_args()

    stop = False

    def on_term(_sig: int, _frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    producer = Producer(
        {"bootstrap.servers": args.bootstrap_server, "acks": "all", "client.id": "steady"}
    )
    latencies: list[float] = []
    failed = 0
    ready = False

    def delivered(sent: float) -> Callable[[KafkaError | None, Message], None]:
        def callback(err: KafkaError | None, _msg: Message) -> None:
            nonlocal failed, ready
            if err is not None:
                failed += 1
                return
            latencies.append((time.monotonic() - sent) * 1000)
            if not ready:
                ready = True
                print("ready", file=sys.stderr, flush=True)

        return callback

    payload = b"x" * args.size
    interval = 1.0 / args.rate
    began = time.monotonic()
    sent = 0
    while not stop:
        due = began + sent * interval
        now = time.monotonic()
        if now < due:
            producer.poll(min(due - now, 0.01))
            continue
        while True:
            try:
                producer.produce(args.topic, payload, on_delivery=delivered(time.monotonic()))
                break
            except BufferError:
                producer.poll(0.01)
        sent += 1
        producer.poll(0)
    ran = time.monotonic() - began
    left = producer.flush(60)
    latencies.sort()
    print(
        json.dumps(
            {
                "count": len(latencies),
                "failed": failed,
                "undelivered": left,
                "p50": percentile(latencies, 50),
                "p99": percentile(latencies, 99),
                "max": latencies[-1] if latencies else float("nan"),
                "rate": sent / ran if ran > 0 else 0.0,
                "seconds": ran,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
