"""WireAdmin: the only door to a cluster for the rest of kquota (the public
:class:`kquota.QuotaAdmin` wraps it with argument checks; two names, so a reader always knows
which side of the API a caller stands on).

Nothing above this module sees a raw message (franz-go's kmsg/kadm split): callers get
:data:`~kquota.model.QuotaState` from describes and one :class:`AlterResult` per entity from
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
* The core is async; :class:`WireAdmin` is its synchronous face, owning an ``asyncio.Runner``.
* One connection at a time, to any broker: quota describes are served by any broker and
  alters are forwarded to the controller by the broker. On connecting, Metadata tells the
  cluster's live brokers (:mod:`kquota.kafka.discovery`); when the connection dies, the
  retry goes to another of them, so one bootstrap address survives that broker dying after
  connect, and a dying controller is waited out by the brokers' forwarding and our retries.
* **Reading every broker.** :meth:`AsyncWireAdmin.describe_each_broker` describes at each
  live broker; apply's verification uses it, so that an apply ends only when every broker
  has caught up (see docs/consistency.md);
  :meth:`AsyncWireAdmin.describe_entities_each_broker` reads only given entities there (one
  strict exact-match describe per entity, pipelined), which beats a describe-all while few
  entities are left to check.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import operator
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

from kquota.display import safe_text
from kquota.errors import AlterationFailed, UsageError
from kquota.kafka.authz import denial
from kquota.kafka.config import ClientConfig, parse_bootstrap_servers
from kquota.kafka.conn import (
    API_NAMES,
    DEFAULT_MAX_FRAME_BYTES,
    BodyEncoder,
    BrokerConnection,
    FrameDecoder,
    backoff_seconds,
    config_hint,
    connect_any,
)
from kquota.kafka.discovery import BrokerSet, live_brokers
from kquota.kafka.errors import (
    CLUSTER_AUTHORIZATION_FAILED,
    BrokerConnectionError,
    DroppedAfterRequest,
    KafkaError,
    KafkaTimeoutError,
    UnsupportedVersionError,
    error_code,
    error_for,
    is_retriable,
)
from kquota.kafka.protocol import (
    ALTER_CLIENT_QUOTAS,
    DESCRIBE_CLIENT_QUOTAS,
    DESCRIBE_CLUSTER,
    encode_body,
)
from kquota.kafka.quotawire import (
    ALL_ACCEPTED,
    AllAccepted,
    AlterEntryResult,
    AlterExchange,
    DescribeAnswer,
    Parts,
    decode_describe_response,
)
from kquota.kafka.quotawire import Alteration as AlterationLike
from kquota.model import Entity, QuotaState, display_entity
from kquota.runtime import progress
from kquota.runtime.deadline import waiting_on, within_deadline

log = logging.getLogger(__name__)

T = TypeVar("T")
A = TypeVar("A", bound=AlterationLike)

# Half the controller's MAX_RECORDS_PER_USER_OP (10,000): far from the edge, few round trips;
# and 200 times below the protocol's array cap (primitives.MAX_ARRAY_ELEMENTS).
DEFAULT_CHUNK_KEYS = 5000
DEFAULT_MAX_IN_FLIGHT = 4
EXACT_IN_FLIGHT = 64
"""Exact-match describes in flight per connection: each is a few dozen bytes each way, so
only round trips would limit them; the broker still serves one connection's requests in
order."""


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
        """set is the op that sets ``key`` to ``value``."""
        return cls(key, float(value), False)

    @classmethod
    def delete(cls, key: str) -> QuotaOp:
        """delete is the op that removes ``key`` (the entity is then unlimited for it)."""
        return cls(key, None, True)


@dataclass(frozen=True, slots=True)
class QuotaAlteration:
    """QuotaAlteration is every change to one entity; the broker applies it all or nothing."""

    entity: Entity
    ops: tuple[QuotaOp, ...]


def alteration_failure(entity: Entity, error_name: str, error_message: str | None) -> str:
    """alteration_failure is the one message for a broker's refusal of an alteration."""
    return f"{display_entity(entity)}: {safe_text(error_message or '')} ({error_name})"


@dataclass(frozen=True, slots=True)
class AlterResult:
    """AlterResult is the broker's verdict on one entity's alteration: the one shape from the
    wire to the public API (:meth:`kquota.QuotaAdmin.alter`) and the applier.

    The broker applies each entity's changes all or nothing, and answers for each entity on
    its own, so a call that alters many entities can partly fail: check :attr:`ok` or call
    :meth:`raise_for_error` on each result.
    """

    entity: Entity
    error_code: int
    error_name: str
    error_message: str | None

    @property
    def ok(self) -> bool:
        """ok is True when the broker accepted (or, validate-only, would accept) the change."""
        return self.error_code == 0

    def raise_for_error(self) -> None:
        """raise_for_error raises :class:`~kquota.AlterationFailed` (the CLI's error and
        message) when the broker refused this entity's alteration."""
        if not self.ok:
            raise AlterationFailed(
                alteration_failure(self.entity, self.error_name, self.error_message)
            )


_ACCEPTED: tuple[int, str | None] = (0, None)
_NONE = error_code(0).name


_DESCRIBE_ALL: dict[str, Any] = {"Components": [], "Strict": False}


def chunk_ends(alterations: Sequence[AlterationLike], max_keys: int) -> list[int]:
    """chunk_ends is where :func:`chunk_alterations` ends each chunk: the index after its last
    alteration, in order (the last is ``len(alterations)``; none for no alterations)."""
    ends: list[int] = []
    size = 0
    for i, alteration in enumerate(alterations):
        n = len(alteration.ops) or 1
        if size and size + n > max_keys:
            ends.append(i)
            size = 0
        size += n
    if alterations:
        ends.append(len(alterations))
    return ends


def chunk_alterations(alterations: Sequence[A], max_keys: int) -> list[list[A]]:
    """chunk_alterations groups whole entities so that no chunk has more than ``max_keys`` ops
    (an entity without ops counts as one).

    An entity with more ops than ``max_keys`` gets a chunk of its own (never split).
    """
    ends = chunk_ends(alterations, max_keys)
    return [list(alterations[start:end]) for start, end in itertools.pairwise([0, *ends])]


@dataclass(frozen=True, slots=True)
class _Validated:
    """_Validated is a chunk a validate-only pass sent and the broker accepted whole: its
    commit sends the same body with the flag changed and, answered the same way, takes the
    same results (an accepted entity's result does not say which pass accepted it)."""

    chunk: Sequence[AlterationLike]
    exchange: AlterExchange
    results: list[AlterResult]

    def sends(self, chunk: Sequence[AlterationLike]) -> bool:
        """sends: ``chunk`` is this chunk, the very same objects in the same order (the
        chunk kept here keeps them alive, so an object's id is not reused meanwhile)."""
        return len(chunk) == len(self.chunk) and all(map(operator.is_, chunk, self.chunk))


def _frozen(kind: type) -> bool:
    params = getattr(kind, "__dataclass_params__", None)
    return params is not None and bool(params.frozen)


def _unchanging(chunk: Sequence[AlterationLike]) -> bool:
    """_unchanging: nothing in ``chunk`` can change between a validate-only pass and the
    commit without being rebuilt (frozen dataclasses holding tuples: a plan's alterations,
    QuotaAlteration), so bytes encoded for the one hold for the other. An API caller's own
    mutable objects are encoded afresh for each call."""
    ops = list(map(_ops_of, chunk))
    if set(map(type, ops)) != {tuple}:
        return False
    entities = list(map(_entity_of, chunk))
    if set(map(type, entities)) != {Entity} or set(map(type, map(_parts_of, entities))) != {tuple}:
        return False
    kinds = set(map(type, chunk)) | set(map(type, itertools.chain.from_iterable(ops)))
    return all(map(_frozen, kinds))


def check_unique(alterations: Sequence[AlterationLike]) -> None:
    """check_unique rejects two alterations of one entity, or one key twice in an entity."""
    # The common case first, in C: distinct parts are distinct entities, and an entity's
    # one or two keys are compared directly. Anything else is looked at one by one below.
    if len({a.entity.parts for a in alterations}) == len(alterations) and all(
        len(ops) < 2 or (len(ops) == 2 and ops[0].key != ops[1].key)
        for ops in map(_ops_of, alterations)
    ):
        return
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


_ops_of = operator.attrgetter("ops")
_entity_of = operator.attrgetter("entity")
_parts_of = operator.attrgetter("parts")


def _waiting_for(api_key: int, conn: BrokerConnection) -> contextlib.AbstractContextManager[None]:
    """What the command waits on while a request is out (the deadline's message names it)."""
    return waiting_on(f"{API_NAMES.get(api_key, api_key)} from {conn.shown}")


class AsyncWireAdmin:
    """AsyncWireAdmin is the async core of :class:`WireAdmin` (one lazily opened connection)."""

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
        self._brokers = BrokerSet(bootstrap_servers)
        self._config = config
        self._chunk_keys = chunk_keys
        self._max_in_flight = max_in_flight
        self._max_frame = max_frame_bytes
        self._conn: BrokerConnection | None = None
        self._connecting: asyncio.Lock | None = None
        self._side: dict[str, BrokerConnection] = {}
        self._validated: dict[int, _Validated] = {}

    async def _connection(self) -> BrokerConnection:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._conn is None or self._conn.closed:
                failed = None if self._conn is None else self._conn.address
                if failed is not None:
                    log.info("connection to %s lost; trying the other brokers", failed)
                candidates = self._brokers.candidates(failed)
                with waiting_on(f"a connection to {', '.join(candidates)}"):
                    conn = await connect_any(
                        candidates, self._config, max_frame_bytes=self._max_frame
                    )
                    try:
                        self._brokers.learn(await live_brokers(conn))
                    except BaseException:
                        await conn.close()
                        raise
                self._conn = conn
            return self._conn

    @property
    def config(self) -> ClientConfig:
        """config is the client configuration this admin connects with."""
        return self._config

    @property
    def brokers(self) -> tuple[str, ...]:
        """brokers: the live brokers last learned from Metadata (empty before connecting)."""
        return self._brokers.learned

    def _shown(self) -> str:
        return "the broker" if self._conn is None else self._conn.shown

    @property
    def connected_to(self) -> str | None:
        """connected_to is the address of the broker in use, if connected."""
        return None if self._conn is None or self._conn.closed else self._conn.address

    async def _with_retries(self, what: str, attempt_fn: Callable[[], Awaitable[T]]) -> T:
        """_with_retries runs ``attempt_fn`` again after a connection error or timeout."""
        attempt = 0
        while True:
            try:
                return await attempt_fn()
            except (BrokerConnectionError, KafkaTimeoutError) as e:
                if attempt >= self._config.retries:
                    if isinstance(e, DroppedAfterRequest):
                        raise await self._explain_drop(what, e) from None
                    raise
                delay = backoff_seconds(attempt, self._config.retry_backoff_ms)
                log.info("%s failed (%s); retrying in %.2fs", what, e, delay)
                attempt += 1
                await asyncio.sleep(delay)

    async def _explain_drop(self, what: str, dropped: DroppedAfterRequest) -> KafkaError:
        """_explain_drop says why a broker hung up on a request, by asking a fresh connection
        the smallest question there is (a strict describe with no components: answered with
        nothing, or with an error code, by any broker that takes this client's connections).

        Answered: the connection is fine and the broker refused that request itself; only its
        log has the reason. Dropped too: this client's settings do not fit the listener.
        """
        try:
            conn = await connect_any(
                self._brokers.candidates(), self._config, max_frame_bytes=self._max_frame
            )
        except KafkaError as e:
            return e
        try:
            await conn.request(DESCRIBE_CLIENT_QUOTAS, {"Components": [], "Strict": True})
        except DroppedAfterRequest:
            return BrokerConnectionError(
                f"{dropped}, and dropped a fresh connection's smallest request too "
                f"({config_hint(self._config)})"
            )
        except KafkaError as e:
            return BrokerConnectionError(f"{dropped}; a fresh connection failed too: {e}")
        finally:
            await conn.close()
        return BrokerConnectionError(
            f"{dropped} in answer to {what}; a fresh connection is answered, so it is this "
            "request the broker refused (the broker's log says why)"
        )

    def _authorization(self, code: int, message: str | None, api_key: int) -> str | None:
        """_authorization adds who was denied what to CLUSTER_AUTHORIZATION_FAILED."""
        if code != CLUSTER_AUTHORIZATION_FAILED:
            return message
        return f"{message or error_code(code).message} {denial(api_key, self._config)}"

    async def describe(self, components: Sequence[FilterComponent], strict: bool) -> QuotaState:
        """describe returns every entity matching the filter, with all its quotas."""
        request = _filter_request(components, strict)
        attempt = 0
        while True:
            # Decoded straight into a QuotaState (kquota.kafka.quotawire): no dict per entry.
            answer: DescribeAnswer = await self._with_retries(
                "DescribeClientQuotas",
                functools.partial(
                    self._call,
                    DESCRIBE_CLIENT_QUOTAS,
                    lambda v: encode_body("DescribeClientQuotasRequest", v, request),
                    decode_describe_response,
                ),
            )
            code = answer.error_code
            if code == 0:
                progress.read(len(answer.state))  # per answer: verification's line moves
                return answer.state
            if not is_retriable(code) or attempt >= self._config.retries:
                message = self._authorization(code, answer.error_message, DESCRIBE_CLIENT_QUOTAS)
                raise error_for(code, message, context="describe client quotas")
            await asyncio.sleep(backoff_seconds(attempt, self._config.retry_backoff_ms))
            attempt += 1

    async def describe_each_broker(self) -> list[QuotaState]:
        """describe_each_broker describes every entity at each live broker, one state each.

        The first state is the main connection's (with its retries and failover); a broker
        that cannot be reached now is left out, since it serves nobody until it is back and
        caught up. Connections to the other brokers are kept for the next call.
        """
        return [await self.describe_all(), *await self._at_other_brokers(self._describe_all_at)]

    async def describe_entities_each_broker(self, entities: Sequence[Entity]) -> list[QuotaState]:
        """describe_entities_each_broker is :meth:`describe_each_broker` limited to
        ``entities``: one strict exact-match describe per entity at each live broker, so an
        entity the broker does not hold is simply absent from that broker's state."""
        gate = asyncio.Semaphore(EXACT_IN_FLIGHT)

        async def main_one(entity: Entity) -> QuotaState:
            async with gate:
                return await self.describe(match_filter(entity.parts), strict=True)

        main = _merged(await asyncio.gather(*(main_one(e) for e in entities)))
        return [main, *await self._at_other_brokers(lambda a: self._describe_at(a, entities))]

    async def _at_other_brokers(self, call: Callable[[str], Awaitable[T]]) -> list[T]:
        """_at_other_brokers runs ``call`` for each live broker but the one in use. A broker
        that fails now (down, restarting, answering an error) is left out: the main
        connection's answer stands, and the next call asks it again."""
        main = self.connected_to
        answers: list[T] = []
        for address in self._brokers.learned:
            if address == main:
                continue
            try:
                answers.append(await call(address))
            except KafkaError as e:
                log.info("broker %s skipped: %s", address, e)
        return answers

    async def _side_connection(self, address: str) -> BrokerConnection:
        conn = self._side.get(address)
        if conn is None or conn.closed:
            with waiting_on(f"a connection to {address}"):
                conn = await BrokerConnection.open(
                    address, self._config, max_frame_bytes=self._max_frame
                )
            self._side[address] = conn
        return conn

    async def broker_connections(self) -> list[BrokerConnection]:
        """broker_connections: the main connection, then one to each other live broker that
        answers now (kept for the next call). For requests a broker answers only for itself:
        its own configs, the groups it coordinates."""
        return [await self._connection(), *await self._at_other_brokers(self._side_connection)]

    async def _describe_at(self, address: str, entities: Sequence[Entity]) -> QuotaState:
        """_describe_at describes ``entities`` (each by exact match) at one other broker."""
        conn = await self._side_connection(address)
        gate = asyncio.Semaphore(EXACT_IN_FLIGHT)

        async def one(entity: Entity) -> QuotaState:
            request = _filter_request(match_filter(entity.parts), strict=True)
            async with gate:
                return await _describe_on(conn, address, request)

        return _merged(await asyncio.gather(*(one(e) for e in entities)))

    async def _describe_all_at(self, address: str) -> QuotaState:
        return await _describe_on(await self._side_connection(address), address, _DESCRIBE_ALL)

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
        with _waiting_for(api_key, conn):
            return await conn.request(api_key, body)

    async def _call(self, api_key: int, encode: BodyEncoder, decode: FrameDecoder[T]) -> T:
        conn = await self._connection()
        with _waiting_for(api_key, conn):
            return await conn.call(api_key, encode, decode)

    def request_ends(self, alterations: Sequence[AlterationLike]) -> list[int]:
        """request_ends is where :meth:`alter` would end each request it sends for
        ``alterations`` (:func:`chunk_ends`). A later call over a run of them that starts and
        ends at these indices sends the very requests again: a commit's batches cut there
        reuse the bytes its validate-only pass encoded."""
        return chunk_ends(alterations, self._chunk_keys)

    async def alter(
        self, alterations: Sequence[AlterationLike], *, validate_only: bool
    ) -> list[AlterResult]:
        """alter applies (or, with ``validate_only``, checks) alterations; one result each."""
        check_unique(alterations)
        if validate_only:
            self._validated = {}  # only the last validate-only call's chunks are kept
        if not alterations:
            return []
        gate = asyncio.Semaphore(self._max_in_flight)

        async def run(chunk: list[AlterationLike]) -> list[AlterResult]:
            async with gate:
                return await self._alter_chunk(chunk, validate_only)

        chunks = chunk_alterations(alterations, self._chunk_keys)
        # Chunks are consecutive runs of ``alterations``: their results, in chunk order, are
        # one result per alteration in the given order.
        return list(itertools.chain.from_iterable(await asyncio.gather(*(run(c) for c in chunks))))

    async def _alter_chunk(
        self, chunk: list[AlterationLike], validate_only: bool
    ) -> list[AlterResult]:
        """_alter_chunk sends one chunk (again for the entities a retriable error answered,
        within the retries) and gives its results in the chunk's order."""
        results: dict[Parts, AlterResult] = {}
        todo = chunk
        attempt = 0
        prior = None if validate_only else self._validated.pop(id(chunk[0]), None)
        if prior is not None and not prior.sends(chunk):
            prior = None
        while True:
            exchange = AlterExchange(
                todo, validate_only, prior.exchange if prior is not None and todo is chunk else None
            )
            answer = await self._with_retries(
                "AlterClientQuotas",
                functools.partial(
                    self._call, ALTER_CLIENT_QUOTAS, exchange.encode, exchange.decode
                ),
            )
            if answer is ALL_ACCEPTED and todo is chunk:
                progress.advance(len(chunk))
                if prior is not None:
                    return prior.results
                accepted = [AlterResult(a.entity, 0, _NONE, None) for a in chunk]
                if validate_only and exchange.accepted_all and _unchanging(chunk):
                    self._validated[id(chunk[0])] = _Validated(chunk, exchange, accepted)
                return accepted
            # Matched by the entities' parts: equal parts are equal entities, and a tuple
            # hashes in C (an Entity's hash and equality are Python calls).
            answered: dict[Parts, tuple[int, str | None]] = (
                {a.entity.parts: _ACCEPTED for a in todo}
                if isinstance(answer, AllAccepted)
                else _answered(todo, answer, self._shown())
            )
            retry: list[AlterationLike] = []
            for a in todo:
                code, message = answered[a.entity.parts]
                if code == 0:
                    results[a.entity.parts] = AlterResult(a.entity, 0, _NONE, None)
                    continue
                if is_retriable(code) and attempt < self._config.retries:
                    retry.append(a)
                    continue
                row = error_code(code)
                message = self._authorization(code, message, ALTER_CLIENT_QUOTAS)
                results[a.entity.parts] = AlterResult(
                    a.entity, code, row.name, message or row.message
                )
            progress.advance(len(todo) - len(retry))  # per response: the bar moves with each
            if not retry:
                return [results[a.entity.parts] for a in chunk]
            await asyncio.sleep(backoff_seconds(attempt, self._config.retry_backoff_ms))
            attempt += 1
            todo = retry

    async def close(self) -> None:
        self._validated = {}
        side, self._side = self._side, {}
        for conn in side.values():
            await conn.close()
        if self._conn is not None:
            await self._conn.close()
            self._conn = None


def _answered(
    sent: Sequence[AlterationLike], answer: Sequence[AlterEntryResult], broker: str
) -> dict[Parts, tuple[int, str | None]]:
    """_answered is the broker's answer (error code, message) for each entity ``sent``.

    A broker answers each entity of the request once. An answer that does not (an entity
    left out, one the request did not name, one answered twice: an error behind an
    acceptance, or the reverse) is not an answer to this request and is believed for none
    of its entities: a BrokerConnectionError, as bytes that are not Kafka's are, which an
    applier settles by reading what the cluster holds (a commit's outcome is unknown).
    """
    answered = {e.parts: (e.error_code, e.error_message or None) for e in answer}
    if len(answer) == len(answered) == len(sent) and all(a.entity.parts in answered for a in sent):
        return answered
    expected = {a.entity.parts for a in sent}
    seen: set[Parts] = set()
    why = f"answered {len(answer)} entities for the {len(sent)} sent"
    for e in answer:
        if e.parts not in expected:
            why = f"answered {display_entity(e.entity)}, which the request did not send"
            break
        if e.parts in seen:
            why = f"answered {display_entity(e.entity)} twice"
            break
        seen.add(e.parts)
    raise BrokerConnectionError(
        f"malformed response from {broker}: AlterClientQuotas {why}; none of the request's "
        "entities is taken as answered"
    )


def match_filter(parts: Iterable[tuple[str, str | None]]) -> list[FilterComponent]:
    """match_filter matches each (type, name) part by name, or ``None`` the default of its
    type; with ``strict`` and an entity's parts, that entity alone."""
    return [
        FilterComponent.default(t) if n is None else FilterComponent.exact(t, n) for t, n in parts
    ]


def _filter_request(components: Sequence[FilterComponent], strict: bool) -> dict[str, Any]:
    return {
        "Components": [
            {"EntityType": c.entity_type, "MatchType": int(c.match_type), "Match": c.match}
            for c in components
        ],
        "Strict": strict,
    }


async def _describe_on(conn: BrokerConnection, address: str, request: dict[str, Any]) -> QuotaState:
    """_describe_on sends one describe on a side connection (no retries: the caller skips a
    broker that fails and asks again at its next poll)."""
    answer: DescribeAnswer = await conn.call(
        DESCRIBE_CLIENT_QUOTAS,
        lambda v: encode_body("DescribeClientQuotasRequest", v, request),
        decode_describe_response,
    )
    if answer.error_code:
        raise error_for(answer.error_code, answer.error_message, context=address)
    progress.read(len(answer.state))
    return answer.state


def _merged(states: Sequence[QuotaState]) -> QuotaState:
    merged: QuotaState = {}
    for state in states:
        merged.update(state)
    return merged


class WireAdmin:
    """WireAdmin is the synchronous client: ``with WireAdmin(servers, config) as admin: ...``.

    It owns an ``asyncio.Runner`` for its lifetime, so it must not be used from inside a
    running event loop (use :class:`AsyncWireAdmin` there).
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
        self._core = AsyncWireAdmin(
            bootstrap_servers,
            config or ClientConfig(),
            chunk_keys=chunk_keys,
            max_in_flight=max_in_flight,
            max_frame_bytes=max_frame_bytes,
        )
        self._runner: asyncio.Runner | None = None

    def __enter__(self) -> WireAdmin:
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
            raise RuntimeError("use WireAdmin as a context manager: with WireAdmin(...) as a")
        # The command's overall deadline (kquota.runtime.deadline) bounds every call, retries
        # included.
        return self._runner.run(within_deadline(coro))

    def run(self, job: Callable[[AsyncWireAdmin], Coroutine[Any, Any, T]]) -> T:
        """run runs ``job`` on the async core under the command's deadline: the door for
        Kafka-layer modules beside this one (kquota.kafka.principal_rpcs)."""
        return self._run(job(self._core))

    def describe(self, filter: Sequence[FilterComponent], strict: bool) -> QuotaState:
        """describe returns the entities matching ``filter`` (see :class:`FilterComponent`)."""
        return self._run(self._core.describe(filter, strict))

    def describe_all(self) -> QuotaState:
        """describe_all returns every entity with quotas, ip entities included."""
        return self._run(self._core.describe_all())

    def describe_each_broker(self) -> list[QuotaState]:
        """describe_each_broker is describe_all at each live broker (see the async core)."""
        return self._run(self._core.describe_each_broker())

    def describe_entities_each_broker(self, entities: Sequence[Entity]) -> list[QuotaState]:
        """describe_entities_each_broker reads only ``entities`` at each live broker."""
        return self._run(self._core.describe_entities_each_broker(entities))

    @property
    def brokers(self) -> tuple[str, ...]:
        """brokers: the cluster's live brokers as last learned (empty before connecting)."""
        return self._core.brokers

    @property
    def connected_to(self) -> str | None:
        return self._core.connected_to

    def cluster_id(self) -> str | None:
        """cluster_id is the cluster's id (DescribeCluster), or None on brokers before 2.8."""
        return self._run(self._core.cluster_id())

    def request_ends(self, alterations: Sequence[AlterationLike]) -> list[int]:
        """request_ends: where :meth:`alter` would end each request (see the async core)."""
        return self._core.request_ends(alterations)

    def alter(
        self, alterations: Sequence[AlterationLike], *, validate_only: bool
    ) -> list[AlterResult]:
        """alter returns one :class:`AlterResult` per alteration, in the given order.

        Anything with an entity and ops of key, value and remove will do (a plan's
        alterations, without a copy): :class:`QuotaAlteration` is one."""
        return self._run(self._core.alter(alterations, validate_only=validate_only))
