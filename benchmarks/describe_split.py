"""``kquota describe`` with its describe-all split into filtered requests (measured, not adopted).

The hypothesis of issue 22 goal 3: the broker builds its whole answer before the first byte
leaves it (a describe-all of 100k entities: about 0.3-0.7 s of broker time), so asking for
the entity shapes separately could let kquota decode one part while the broker builds the
next (``pipelined``: the requests one after another on one connection, which a broker serves
in order), or let the broker build the parts at once on several request threads
(``connections``: one connection a request).

The parts cover every entity a Kafka broker can hold, each strictly: ``{user}``,
``{client-id}``, ``{user, client-id}`` and ``{ip}`` with MATCH_TYPE_SPECIFIED (which Kafka's
KRaft image and ZooKeeper paths both match with default names too), and, in case a broker
reads SPECIFIED as "named only", the entities with a default part of each type
(MATCH_TYPE_DEFAULT, not strict). Entities found twice merge as a dict does.

Run as ``python benchmarks/describe_split.py MODE describe --bootstrap-server BS --format
json`` (MODE ``pipelined`` or ``connections``): kquota's own CLI, with only
``AsyncWireAdmin.describe_all`` replaced. ``bench_describe.py`` checks that its output is
byte for byte kquota's before timing it.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from typing import Any

from kquota.kafka import admin
from kquota.kafka.admin import AsyncWireAdmin, MatchType
from kquota.kafka.conn import BrokerConnection
from kquota.kafka.protocol import DESCRIBE_CLIENT_QUOTAS, encode_body
from kquota.kafka.quotawire import DescribeAnswer, decode_describe_response
from kquota.model import QuotaState

SPECIFIED, DEFAULT = int(MatchType.SPECIFIED), int(MatchType.DEFAULT)
# Smallest part first (the first answer starts the decoding soonest), the largest between.
STRICT_SHAPES = (("ip",), ("user",), ("user", "client-id"), ("client-id",))
DEFAULT_TYPES = ("user", "client-id", "ip")


def requests() -> list[dict[str, Any]]:
    """requests are the filters whose answers together hold every entity."""
    out = [
        {
            "Components": [{"EntityType": t, "MatchType": SPECIFIED, "Match": None} for t in shape],
            "Strict": True,
        }
        for shape in STRICT_SHAPES
    ]
    out += [
        {"Components": [{"EntityType": t, "MatchType": DEFAULT, "Match": None}], "Strict": False}
        for t in DEFAULT_TYPES
    ]
    return out


def split_describe_all(mode: str) -> Any:
    async def describe_all(self: AsyncWireAdmin) -> QuotaState:
        main = await self._connection()
        bodies = requests()
        if mode == "pipelined":
            conns = [main] * len(bodies)
        else:
            opened = [BrokerConnection.open(main.address, self.config) for _ in bodies[1:]]
            conns = [main, *await asyncio.gather(*opened)]
        try:
            answers: list[DescribeAnswer] = await asyncio.gather(
                *(
                    conn.call(
                        DESCRIBE_CLIENT_QUOTAS,
                        functools.partial(encode_body, "DescribeClientQuotasRequest", body=body),
                        decode_describe_response,
                    )
                    for conn, body in zip(conns, bodies, strict=True)
                )
            )
        finally:
            for conn in conns[1:]:
                if conn is not main:
                    await conn.close()
        state: QuotaState = {}
        for answer in answers:
            if answer.error_code:
                raise SystemExit(f"describe failed: error {answer.error_code}")
            state.update(answer.state)
        return state

    return describe_all


def main() -> None:
    mode = sys.argv.pop(1)
    if mode not in ("pipelined", "connections"):
        raise SystemExit(f"unknown mode {mode!r}: pipelined or connections")
    admin.AsyncWireAdmin.describe_all = split_describe_all(mode)  # type: ignore[method-assign]
    from kquota.cli.main import main as kquota_main

    sys.argv[0] = "kquota"
    sys.exit(kquota_main())


if __name__ == "__main__":
    main()
