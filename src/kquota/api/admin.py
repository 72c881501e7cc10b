"""kquota's public clients: :class:`AsyncQuotaAdmin` and its synchronous face :class:`QuotaAdmin`.

A thin facade over the Kafka layer's admin (:mod:`kquota.kafka.admin`): built from Kafka
client properties, as ``--command-config`` files give them, it takes entities as plain
mappings, checks alterations before sending, and adds KIP-546's resolve, computed locally by
the same precedence rules as ``kquota resolve`` and the fleet. Errors are the CLI's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

from kquota import argcheck as check
from kquota.api.alterations import AlterationLike, AlterResult, checked_alterations
from kquota.api.entities import (
    EntityLike,
    as_entity,
    entity_problems,
    filter_components,
    type_problem,
)
from kquota.errors import UsageError
from kquota.kafka.admin import AsyncWireAdmin as _CoreAdmin
from kquota.kafka.admin import FilterComponent
from kquota.model import CLIENT_ID, IP, USER, QuotaState
from kquota.plan.resolver import Resolution, resolve
from kquota.runtime.closing import ClosesOnExit
from kquota.target import Target

T = TypeVar("T")

PropertyValue = str | int | float | bool
_VALUE_TYPES = (str, int, float)  # bool is an int


def client_properties(
    properties: Mapping[str, PropertyValue] | None, options: Mapping[str, PropertyValue]
) -> dict[str, str]:
    """client_properties merges a properties mapping with keyword options, ``security_protocol``
    standing for ``security.protocol`` (keywords win). Values become Kafka's strings."""
    if properties is not None:
        check.string_mapping(properties, "QuotaAdmin: properties", _VALUE_TYPES)
    check.string_mapping(options, "QuotaAdmin: keyword", _VALUE_TYPES)
    props: dict[str, str] = {}
    for key, value in [*(properties or {}).items(), *options.items()]:
        name = key.replace("_", ".") if key in options else key
        props[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return props


class AsyncQuotaAdmin:
    """AsyncQuotaAdmin reads and changes a cluster's client quotas (asyncio).

    Build it from Kafka client properties or keywords, and use it as an async context
    manager: ``async with AsyncQuotaAdmin({"bootstrap.servers": "host:9092"}) as admin``.
    ``bootstrap_servers="host:9092", security_protocol="SASL_SSL"`` is the keyword form.
    The supported properties are those of :mod:`kquota.kafka.config`; secrets never appear in
    ``repr``, messages or logs. One connection is opened on first use and closed on exit.
    """

    def __init__(
        self, properties: Mapping[str, PropertyValue] | None = None, /, **options: PropertyValue
    ) -> None:
        target = Target.from_options(None, None, client_properties(properties, options))
        self._target = target
        self._core = _CoreAdmin(target.bootstrap_servers, target.config)

    def __repr__(self) -> str:
        return f"AsyncQuotaAdmin(bootstrap_servers={','.join(self._target.bootstrap_servers)!r})"

    @property
    def bootstrap_servers(self) -> tuple[str, ...]:
        """bootstrap_servers are the addresses this client connects to, first answer wins."""
        return self._target.bootstrap_servers

    async def __aenter__(self) -> AsyncQuotaAdmin:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """close closes the connection (``async with`` does it for you)."""
        await self._core.close()

    async def describe(self, components: EntityLike, *, strict: bool = False) -> QuotaState:
        """describe returns the entities matching ``components`` with all their quotas.

        ``components`` maps entity type to a name (matched exactly) or ``None`` (the
        default entity). Not strict, as KIP-546 matches: ``{"client-id": "app"}`` also
        returns ``{user=alice, client-id=app}``; ``strict=True`` keeps only entities with
        exactly the given types. An empty mapping returns every entity unless strict.
        """
        check.flag(strict, "describe: strict")
        found = filter_components(components)
        unknown = type_problem(tuple(c.entity_type for c in found))
        if unknown is not None:
            raise UsageError(f"describe: {unknown}")
        return await self._core.describe(found, strict)

    async def describe_all(self) -> QuotaState:
        """describe_all maps every entity of the cluster (ip entities included) to its quotas."""
        return await self._core.describe_all()

    async def alter(
        self, alterations: Iterable[AlterationLike], *, validate_only: bool = False
    ) -> list[AlterResult]:
        """alter applies alterations and returns one :class:`AlterResult` each, in order.

        Each alteration is a :class:`QuotaAlteration` or a pair ``(entity, {key: value})``
        where a value of ``None`` removes the key. All are checked first (a UsageError, and
        nothing sent, if any is invalid); each entity is then applied all or nothing by the
        broker, and a refusal is reported in that entity's result, not raised.
        ``validate_only`` has the broker check without applying.
        """
        check.flag(validate_only, "alter: validate_only")
        checked = checked_alterations(alterations)
        return await self._core.alter(checked, validate_only=validate_only)

    async def resolve(self, entity: EntityLike) -> Resolution:
        """resolve gives a client's effective quotas and the entity each comes from.

        ``entity`` names who connects: ``{"user": "alice", "client-id": "app"}``, and/or
        ``{"ip": "10.0.0.1"}``. Keys without a quota (unlimited) are absent from the result.
        The broker has no resolve API; this describes the candidate entities and applies the
        broker's precedence (:mod:`kquota.plan.resolver`).
        """
        principal = as_entity(entity).to_json()
        unknown = sorted(set(principal) - {USER, CLIENT_ID, IP})
        if unknown:
            raise UsageError(f"resolve takes user, client-id and ip; not {', '.join(unknown)}")
        defaults = sorted(t for t, n in principal.items() if n is None)
        if defaults:
            raise UsageError(
                f"resolve needs the names a client connects with; {', '.join(defaults)} "
                "is the default entity"
            )
        user, client, ip = principal.get(USER), principal.get(CLIENT_ID), principal.get(IP)
        if ip is not None:
            bad = entity_problems(as_entity({IP: ip}))
            if bad:
                raise UsageError(f"resolve: {bad[0]}")
        state = await self._candidates(user, client, ip)
        return resolve(state, user, client, ip)

    async def _candidates(self, user: str | None, client: str | None, ip: str | None) -> QuotaState:
        """_candidates describes a superset of the entities resolution can pick from."""
        filters: list[tuple[list[FilterComponent], bool]] = []
        if user is not None or client is not None:
            if user:
                filters.append(([FilterComponent.exact(USER, user)], False))
            filters.append(([FilterComponent.default(USER)], False))
            if client:
                filters.append(([FilterComponent.exact(CLIENT_ID, client)], True))
            filters.append(([FilterComponent.default(CLIENT_ID)], True))
        if ip is not None:
            # Every ip entity: the broker compares ip names as addresses ("::1" = "0::1").
            filters.append(([FilterComponent.specified(IP)], True))
        state: QuotaState = {}
        for part in await asyncio.gather(*(self._core.describe(f, s) for f, s in filters)):
            state.update(part)
        return state


class QuotaAdmin(ClosesOnExit):
    """QuotaAdmin is the synchronous :class:`AsyncQuotaAdmin`, with the same methods.

    ``with QuotaAdmin({"bootstrap.servers": "host:9092"}) as admin: admin.describe_all()``.
    It runs its own event loop, so use :class:`AsyncQuotaAdmin` inside async code.

    It is one thread's client: the thread that first uses it. Its event loop and connection
    cannot serve two threads (a second thread's call would be queued on a loop another thread
    runs, or run the loop twice), so a call from any other thread is a UsageError, at once;
    give each thread its own QuotaAdmin.
    """

    def __init__(
        self, properties: Mapping[str, PropertyValue] | None = None, /, **options: PropertyValue
    ) -> None:
        self._async = AsyncQuotaAdmin(properties, **options)
        self._runner: asyncio.Runner | None = None
        self._claim = threading.Lock()
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return f"QuotaAdmin(bootstrap_servers={','.join(self.bootstrap_servers)!r})"

    @property
    def bootstrap_servers(self) -> tuple[str, ...]:
        """bootstrap_servers are the addresses this client connects to, first answer wins."""
        return self._async.bootstrap_servers

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        try:
            self._own_thread()
        except UsageError:
            coro.close()  # never started: no "was never awaited" warning
            raise
        if self._runner is None:
            self._runner = asyncio.Runner()
        return self._runner.run(coro)

    def _own_thread(self) -> None:
        """_own_thread makes the calling thread this client's on first use, and refuses any
        other thread after that."""
        me = threading.current_thread()
        with self._claim:
            if self._thread is None:
                self._thread = me
            owner = self._thread
        if owner is not me:
            raise UsageError(
                f"QuotaAdmin is one thread's client: this one belongs to thread {owner.name!r}, "
                f"not {me.name!r}; give each thread its own QuotaAdmin (or share one "
                "AsyncQuotaAdmin within one event loop)"
            )

    def close(self) -> None:
        """close closes the connection and the event loop (``with`` does it for you)."""
        if self._runner is not None:
            self._own_thread()
            try:
                self._runner.run(self._async.close())
            finally:
                self._runner.close()
                self._runner = None

    def describe(self, components: EntityLike, *, strict: bool = False) -> QuotaState:
        """describe: see :meth:`AsyncQuotaAdmin.describe` (KIP-546 matching, not strict)."""
        return self._run(self._async.describe(components, strict=strict))

    def describe_all(self) -> QuotaState:
        """describe_all maps every entity of the cluster (ip entities included) to its quotas."""
        return self._run(self._async.describe_all())

    def alter(
        self, alterations: Iterable[AlterationLike], *, validate_only: bool = False
    ) -> list[AlterResult]:
        """alter: see :meth:`AsyncQuotaAdmin.alter` (one result per entity, in order)."""
        return self._run(self._async.alter(alterations, validate_only=validate_only))

    def resolve(self, entity: EntityLike) -> Resolution:
        """resolve: see :meth:`AsyncQuotaAdmin.resolve` (effective quotas and their sources)."""
        return self._run(self._async.resolve(entity))
