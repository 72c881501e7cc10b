"""QuotaAdmin: the only door to a cluster for the rest of kquota.

Nothing above this module sees a raw message (franz-go's kmsg/kadm split): callers get
:data:`~kquota.model.QuotaState` from describes and one :class:`AlteredQuota` per entity from
alters. Decisions:

* **Per-entity results, never one exception for a partial failure.** The broker validates and
  applies each entity on its own (all-or-nothing within an entity), so ``alter`` reports each
  entity's outcome. A request-level failure (authorization, POLICY_VIOLATION) arrives as that
  error on every entry, and is reported per entity too. Exceptions are for the transport:
  connection, authentication, timeout, unsupported version.
* **Matched by entity, not position.** The broker answers in Java HashMap order.
* **One alteration per entity per request**, checked up front: the broker applies the first of
  two alterations of one entity and then reports "Ignoring duplicate entity" for it, which
  would make a success look like a failure.
* **Chunked** below the controller's limit of 10,000 records per request (above it every entry
  fails with POLICY_VIOLATION); chunks are pipelined over one connection with a bounded number
  in flight. An entity is never split: the broker's per-entity atomicity is kept.
* **Retries.** Alter ops are idempotent (set a value, remove a key), so a chunk whose
  connection failed, and entities that got a retriable error code, are sent again, a bounded
  number of times with exponential backoff and jitter.
* The core is async; :class:`QuotaAdmin` is its synchronous face, owning an ``asyncio.Runner``.
* One connection to the first bootstrap address that answers: quota describes are served by
  any broker and alters are forwarded to the controller by the broker, so no Metadata call
  is needed. (A cluster id needs the Metadata API, which kquota's codec does not carry yet.)
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

from kquota.errors import UsageError
from kquota.kafka.config import ClientConfig, parse_bootstrap_servers
from kquota.kafka.conn import (
    DEFAULT_MAX_FRAME_BYTES,
    BrokerConnection,
    backoff_seconds,
    connect_any,
)
from kquota.kafka.errors import (
    UNKNOWN_SERVER_ERROR,
    BrokerConnectionError,
    KafkaTimeoutError,
    UnsupportedVersionError,
    error_code,
    error_for,
    is_retriable,
)
from kquota.kafka.protocol import ALTER_CLIENT_QUOTAS, DESCRIBE_CLIENT_QUOTAS, DESCRIBE_CLUSTER
from kquota.model import Entity, QuotaState

log = logging.getLogger(__name__)

T = TypeVar("T")

# Half the controller's MAX_RECORDS_PER_USER_OP (10,000): far from the edge, few round trips.
DEFAULT_CHUNK_KEYS = 5000
DEFAULT_MAX_IN_FLIGHT = 4


class MatchType(IntEnum):
    """MatchType is DescribeClientQuotas' component match type."""

    EXACT = 0
    DEFAULT = 1
    SPECIFIED = 2


@dataclass(frozen=True, slots=True)
class FilterComponent:
    """FilterComponent is one describe filter component, sent as given (the broker judges it)."""

    entity_type: str
    match_type: int
    match: str | None = None

    @classmethod
    def exact(cls, entity_type: str, name: str) -> FilterComponent:
        return cls(entity_type, MatchType.EXACT, name)

    @classmethod
    def default(cls, entity_type: str) -> FilterComponent:
        return cls(entity_type, MatchType.DEFAULT, None)

    @classmethod
    def specified(cls, entity_type: str) -> FilterComponent:
        """specified matches any name of the type, the default entity included."""
        return cls(entity_type, MatchType.SPECIFIED, None)


@dataclass(frozen=True, slots=True)
class QuotaOp:
    """QuotaOp sets ``key`` to ``value``, or removes ``key`` (``remove=True``, value ignored)."""

    key: str
    value: float | None = None
    remove: bool = False

    @classmethod
    def set(cls, key: str, value: float) -> QuotaOp:
        return cls(key, float(value), False)

    @classmethod
    def delete(cls, key: str) -> QuotaOp:
        return cls(key, None, True)


@dataclass(frozen=True, slots=True)
class QuotaAlteration:
    """QuotaAlteration is every change to one entity; the broker applies it all or nothing."""

    entity: Entity
    ops: tuple[QuotaOp, ...]


@dataclass(frozen=True, slots=True)
class AlteredQuota:
    """AlteredQuota is the broker's verdict on one entity's alteration."""

    entity: Entity
    error_code: int
    error_name: str
    error_message: str | None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


def _entity_wire(entity: Entity) -> list[dict[str, Any]]:
    return [{"EntityType": t, "EntityName": n} for t, n in entity.parts]


# Wire type order (HashMap order, the same for every entity of one shape) -> the index order
# that puts the parts in Entity's canonical order. Entity.of sorts with a key function on
# every call, a third of describe-all's time at 100k entities; this is a dict lookup.
_CANONICAL_ORDER: dict[tuple[str, ...], tuple[int, ...] | None] = {}


def _entity_from_wire(parts: list[dict[str, Any]]) -> Entity:
    types = tuple(p["EntityType"] for p in parts)
    order = _CANONICAL_ORDER.get(types, ())
    if order == ():
        canonical = Entity.of({t: None for t in types}).types
        # None: repeated types (never sent by a broker); Entity.of resolves them.
        order = tuple(types.index(t) for t in canonical) if len(canonical) == len(types) else None
        _CANONICAL_ORDER[types] = order
    if order is None:
        return Entity.of({p["EntityType"]: p["EntityName"] for p in parts})
    return Entity(tuple((parts[i]["EntityType"], parts[i]["EntityName"]) for i in order))


def _ops_count(alteration: QuotaAlteration) -> int:
    return max(1, len(alteration.ops))


def chunk_alterations(
    alterations: Sequence[QuotaAlteration], max_keys: int
) -> list[list[QuotaAlteration]]:
    """chunk_alterations groups whole entities so that no chunk has more than ``max_keys`` ops.

    An entity with more ops than ``max_keys`` gets a chunk of its own (never split).
    """
    chunks: list[list[QuotaAlteration]] = []
    current: list[QuotaAlteration] = []
    size = 0
    for alteration in alterations:
        n = _ops_count(alteration)
        if current and size + n > max_keys:
            chunks.append(current)
            current, size = [], 0
        current.append(alteration)
        size += n
    if current:
        chunks.append(current)
    return chunks


def check_unique(alterations: Sequence[QuotaAlteration]) -> None:
    """check_unique rejects two alterations of one entity, or one key twice in an entity."""
    seen: set[Entity] = set()
    for alteration in alterations:
        if alteration.entity in seen:
            raise UsageError(
                f"entity {alteration.entity} appears in more than one alteration; merge them "
                "(the broker would apply the first and reject the second)"
            )
        seen.add(alteration.entity)
        keys = [op.key for op in alteration.ops]
        if len(keys) != len(set(keys)):
            dup = sorted({k for k in keys if keys.count(k) > 1})
            raise UsageError(f"entity {alteration.entity} alters {', '.join(dup)} more than once")


class AsyncQuotaAdmin:
    """AsyncQuotaAdmin is the async core of :class:`QuotaAdmin` (one lazily opened connection)."""

    def __init__(
        self,
        bootstrap_servers: Sequence[str],
        config: ClientConfig,
        *,
        chunk_keys: int = DEFAULT_CHUNK_KEYS,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        if not bootstrap_servers:
            raise UsageError("no bootstrap servers: give --bootstrap-server or bootstrap.servers")
        if chunk_keys < 1 or max_in_flight < 1:
            raise ValueError("chunk_keys and max_in_flight must be at least 1")
        self._servers = tuple(bootstrap_servers)
        self._config = config
        self._chunk_keys = chunk_keys
        self._max_in_flight = max_in_flight
        self._max_frame = max_frame_bytes
        self._conn: BrokerConnection | None = None
        self._connecting: asyncio.Lock | None = None

    async def _connection(self) -> BrokerConnection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                self._conn = await connect_any(
                    self._servers, self._config, max_frame_bytes=self._max_frame
                )
            return self._conn

    async def _with_retries(self, what: str, attempt_fn: Callable[[], Awaitable[T]]) -> T:
        """_with_retries runs ``attempt_fn`` again after a connection error or timeout."""
        attempt = 0
        while True:
            try:
                return await attempt_fn()
            except (BrokerConnectionError, KafkaTimeoutError) as e:
                if attempt >= self._config.retries:
                    raise
                delay = backoff_seconds(attempt, self._config.retry_backoff_ms)
                log.info("%s failed (%s); retrying in %.2fs", what, e, delay)
                attempt += 1
                await asyncio.sleep(delay)

    async def describe(self, components: Sequence[FilterComponent], strict: bool) -> QuotaState:
        """describe returns every entity matching the filter, with all its quotas."""
        request = {
            "Components": [
                {"EntityType": c.entity_type, "MatchType": int(c.match_type), "Match": c.match}
                for c in components
            ],
            "Strict": strict,
        }
        attempt = 0
        while True:
            body = await self._with_retries(
                "DescribeClientQuotas",
                functools.partial(self._request, DESCRIBE_CLIENT_QUOTAS, request),
            )
            code = body["ErrorCode"]
            if code == 0:
                break
            if not is_retriable(code) or attempt >= self._config.retries:
                raise error_for(code, body.get("ErrorMessage"), context="describe client quotas")
            await asyncio.sleep(backoff_seconds(attempt, self._config.retry_backoff_ms))
            attempt += 1
        entries: list[Any] = body.pop("Entries") or []
        state: QuotaState = {}
        for i, entry in enumerate(entries):
            entity = _entity_from_wire(entry["Entity"])
            state[entity] = {v["Key"]: v["Value"] for v in entry["Values"]}
            entries[i] = None  # let the decoded entry go now: lowers describe-all's peak memory
        return state

    async def describe_all(self) -> QuotaState:
        """describe_all returns every entity of the cluster, ip entities included."""
        return await self.describe([], strict=False)

    async def cluster_id(self) -> str | None:
        """cluster_id is the id the cluster's storage was formatted with (DescribeCluster,
        KIP-700, Kafka 2.8+); None from a broker too old to say. Saved plans are pinned to it."""
        try:
            body = await self._with_retries(
                "DescribeCluster", functools.partial(self._request, DESCRIBE_CLUSTER, {})
            )
        except UnsupportedVersionError:
            return None
        if body["ErrorCode"]:
            raise error_for(body["ErrorCode"], body.get("ErrorMessage"), context="describe cluster")
        cluster_id: str = body["ClusterId"]
        return cluster_id

    async def _request(self, api_key: int, body: dict[str, Any]) -> dict[str, Any]:
        conn = await self._connection()
        return await conn.request(api_key, body)

    async def alter(
        self, alterations: Sequence[QuotaAlteration], *, validate_only: bool
    ) -> list[AlteredQuota]:
        """alter applies (or, with ``validate_only``, checks) alterations; one result each."""
        check_unique(alterations)
        if not alterations:
            return []
        gate = asyncio.Semaphore(self._max_in_flight)

        async def run(chunk: list[QuotaAlteration]) -> dict[Entity, AlteredQuota]:
            async with gate:
                return await self._alter_chunk(chunk, validate_only)

        chunks = chunk_alterations(alterations, self._chunk_keys)
        results: dict[Entity, AlteredQuota] = {}
        for part in await asyncio.gather(*(run(c) for c in chunks)):
            results.update(part)
        return [results[a.entity] for a in alterations]

    async def _alter_chunk(
        self, chunk: list[QuotaAlteration], validate_only: bool
    ) -> dict[Entity, AlteredQuota]:
        results: dict[Entity, AlteredQuota] = {}
        todo = chunk
        attempt = 0
        while True:
            request = {
                "Entries": [
                    {
                        "Entity": _entity_wire(a.entity),
                        "Ops": [
                            {
                                "Key": op.key,
                                "Value": 0.0 if op.remove or op.value is None else op.value,
                                "Remove": op.remove,
                            }
                            for op in a.ops
                        ],
                    }
                    for a in todo
                ],
                "ValidateOnly": validate_only,
            }
            body = await self._with_retries(
                "AlterClientQuotas", functools.partial(self._request, ALTER_CLIENT_QUOTAS, request)
            )
            answered: dict[Entity, tuple[int, str | None]] = {}
            for entry in body["Entries"]:
                answered[_entity_from_wire(entry["Entity"])] = (
                    entry["ErrorCode"],
                    entry.get("ErrorMessage") or None,
                )
            retry: list[QuotaAlteration] = []
            for a in todo:
                code, message = answered.get(
                    a.entity, (UNKNOWN_SERVER_ERROR, "the broker returned no result for it")
                )
                if code != 0 and is_retriable(code) and attempt < self._config.retries:
                    retry.append(a)
                    continue
                row = error_code(code)
                results[a.entity] = AlteredQuota(
                    a.entity, code, row.name, None if code == 0 else (message or row.message)
                )
            if not retry:
                return results
            await asyncio.sleep(backoff_seconds(attempt, self._config.retry_backoff_ms))
            attempt += 1
            todo = retry

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


class QuotaAdmin:
    """QuotaAdmin is the synchronous client: ``with QuotaAdmin(servers, config) as admin: ...``.

    It owns an ``asyncio.Runner`` for its lifetime, so it must not be used from inside a
    running event loop (use :class:`AsyncQuotaAdmin` there).
    """

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        config: ClientConfig | None = None,
        *,
        chunk_keys: int = DEFAULT_CHUNK_KEYS,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
    ) -> None:
        if isinstance(bootstrap_servers, str):
            # A str is a Sequence[str] too: without this, "host:9092" would be 9 servers.
            bootstrap_servers = parse_bootstrap_servers(bootstrap_servers)
        self._core = AsyncQuotaAdmin(
            bootstrap_servers,
            config or ClientConfig(),
            chunk_keys=chunk_keys,
            max_in_flight=max_in_flight,
            max_frame_bytes=max_frame_bytes,
        )
        self._runner: asyncio.Runner | None = None

    def __enter__(self) -> QuotaAdmin:
        self._runner = asyncio.Runner()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._runner is not None:
            try:
                self._runner.run(self._core.close())
            finally:
                self._runner.close()
                self._runner = None

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._runner is None:
            raise RuntimeError("use QuotaAdmin as a context manager: with QuotaAdmin(...) as a")
        return self._runner.run(coro)

    def describe(self, filter: Sequence[FilterComponent], strict: bool) -> QuotaState:
        """describe returns the entities matching ``filter`` (see :class:`FilterComponent`)."""
        return self._run(self._core.describe(filter, strict))

    def describe_all(self) -> QuotaState:
        """describe_all returns every entity with quotas, ip entities included."""
        return self._run(self._core.describe_all())

    def cluster_id(self) -> str | None:
        """cluster_id is the cluster's id (DescribeCluster), or None on brokers before 2.8."""
        return self._run(self._core.cluster_id())

    def alter(
        self, alterations: Sequence[QuotaAlteration], *, validate_only: bool
    ) -> list[AlteredQuota]:
        """alter returns one :class:`AlteredQuota` per alteration, in the given order."""
        return self._run(self._core.alter(alterations, validate_only=validate_only))
