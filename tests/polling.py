"""Polling helpers for tests that read back what a broker was told.

A describe trails the controller (KRaft brokers apply the metadata log at their own pace), and
on a loaded two-core machine the lag reaches seconds, so every read-back polls under one
generous bound rather than a fixed sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from kquota.kafka.admin import WireAdmin
from kquota.model import Entity

T = TypeVar("T")

READ_BACK_TIMEOUT = 30.0


def eventually(
    fetch: Callable[[], T], check: Callable[[T], bool], timeout: float = READ_BACK_TIMEOUT
) -> T:
    """eventually returns the first value of ``fetch()`` that passes ``check``, or the last one
    fetched when ``timeout`` runs out (the caller's assertion then shows it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if check(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def served(
    bootstrap: str, held: Mapping[Entity, Mapping[str, float]], timeout: float = READ_BACK_TIMEOUT
) -> None:
    """served returns once a describe of the broker at ``bootstrap`` shows every entity of
    ``held`` with exactly its quotas, and fails the test with what it last showed when
    ``timeout`` runs out: what another client just wrote is read back only once it is served."""
    with WireAdmin(bootstrap) as admin:
        state = eventually(
            admin.describe_all, lambda s: all(s.get(e) == v for e, v in held.items()), timeout
        )
    shown = {e: state.get(e) for e in held}
    assert shown == dict(held), f"not served within {timeout:g} s: {shown}"


def assert_eventually(
    check: Callable[[], object], timeout: float = READ_BACK_TIMEOUT, what: str = ""
) -> None:
    """assert_eventually polls ``check`` (which asserts, or returns a truth value) until it
    holds, re-raising its last AssertionError when ``timeout`` runs out (``what`` names what
    was awaited, for a check that only returns a truth value)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            assert check(), f"not seen within {timeout:g} s: {what}" if what else "never held"
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def retrying(
    call: Callable[[], object],
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    timeout: float = READ_BACK_TIMEOUT,
) -> None:
    """retrying calls ``call`` again while it raises ``retry_on`` (a change on its way: an
    ACL, a config), re-raising the last such error when ``timeout`` runs out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            call()
            return
        except retry_on:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
