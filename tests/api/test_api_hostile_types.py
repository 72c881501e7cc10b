"""The Python API answers wrong argument types with kquota's own errors (issue 19, item 7).

Every public function and constructor, every parameter, every hostile type: a ``str`` where a
list belongs, ``None``, bytes, a number, a mapping of the wrong shape, an arbitrary object,
NaN, a bool. Each call must raise :class:`kquota.UsageError` naming the function and the
parameter — never a ``TypeError`` or ``AttributeError`` from inside — and must not echo the
value it was given (a misplaced secret stays unprinted).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import kquota
from kquota import (
    Entity,
    LoadedDesired,
    Policy,
    Principal,
    QuotaAdmin,
    Target,
    UsageError,
    check_drift,
    execute_plan,
    load_desired_state,
    make_plan,
    resolve_quotas,
    validate_desired,
)
from kquota.snapshot.files import dump_snapshot

SECRET = "Sup3rS3cretCanary"

HOSTILE: dict[str, Any] = {
    "str": SECRET,
    "None": None,
    "int": 5,
    "bytes": SECRET.encode(),
    "unknown-keys": {SECRET: 1},
    "list-of-int": [1],
    "object": object(),
    "nan": math.nan,
    "bool": True,
}

ADDR = {"bootstrap.servers": "127.0.0.1:1"}  # never reached: every refusal comes first


def _admin(use: Callable[[QuotaAdmin], object]) -> object:
    with QuotaAdmin(ADDR) as admin:
        return use(admin)


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Target, LoadedDesired, Any]:
    root = tmp_path_factory.mktemp("api")
    (root / "snap.json").write_bytes(dump_snapshot({}))
    (root / "quotas").mkdir()
    (root / "quotas" / "a.yaml").write_text(
        "apiVersion: kquota/v1\nkind: ClientQuotas\n"
        "quotas:\n  - {match: {user: bob}, set: {producer_byte_rate: 1MiB}}\n"
    )
    target = Target.of_snapshot(root / "snap.json")
    desired = load_desired_state([root / "quotas"])
    return target, desired, make_plan(target, desired).plan


Call = Callable[[Any, tuple[Target, LoadedDesired, Any]], object]

# name (as the message says it) -> (call with the hostile value, the hostile kinds that are
# wrong for it: a str is a fine name, None a fine optional).
CALLS: dict[str, tuple[Call, tuple[str, ...]]] = {
    "QuotaAdmin: properties": (
        lambda h, o: QuotaAdmin(h),
        ("str", "int", "bytes", "list-of-int", "object", "nan", "bool"),
    ),
    "QuotaAdmin: keyword": (
        lambda h, o: QuotaAdmin(bootstrap_servers=h),
        ("None", "bytes", "list-of-int", "object", "unknown-keys"),
    ),
    "describe: components": (
        lambda h, o: _admin(lambda a: a.describe(h)),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "describe: strict": (
        lambda h, o: _admin(lambda a: a.describe({"user": "a"}, strict=h)),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "unknown-keys"),
    ),
    "alter: alterations": (
        lambda h, o: _admin(lambda a: a.alter(h)),
        ("str", "None", "int", "bytes", "object", "nan", "bool", "unknown-keys"),
    ),
    "an alteration": (
        lambda h, o: _admin(lambda a: a.alter([h])),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "alter: validate_only": (
        lambda h, o: _admin(lambda a: a.alter([], validate_only=h)),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "unknown-keys"),
    ),
    "an entity": (
        lambda h, o: _admin(lambda a: a.resolve(h)),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "make_plan: target": (lambda h, o: make_plan(h, o[1]), tuple(HOSTILE)),
    "make_plan: desired": (lambda h, o: make_plan(o[0], h), tuple(HOSTILE)),
    "make_plan: principals": (
        lambda h, o: make_plan(o[0], o[1], principals=h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "make_plan: protect": (
        lambda h, o: make_plan(o[0], o[1], protect=h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "make_plan: prune": (
        lambda h, o: make_plan(o[0], o[1], prune=h),
        ("str", "int", "bytes", "list-of-int", "object", "nan", "unknown-keys"),
    ),
    "execute_plan: target": (lambda h, o: execute_plan(h, o[2]), tuple(HOSTILE)),
    "execute_plan: plan": (lambda h, o: execute_plan(Target.live(ADDR), h), tuple(HOSTILE)),
    "execute_plan: batch_size": (
        lambda h, o: execute_plan(Target.live(ADDR), o[2], batch_size=h),
        ("str", "None", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "execute_plan: verify_timeout": (
        lambda h, o: execute_plan(Target.live(ADDR), o[2], verify_timeout=h),
        ("str", "None", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "check_drift: target": (lambda h, o: check_drift(h, o[1]), tuple(HOSTILE)),
    "check_drift: desired": (lambda h, o: check_drift(o[0], h), tuple(HOSTILE)),
    "load_desired_state: paths": (
        lambda h, o: load_desired_state(h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "validate_desired: paths": (
        lambda h, o: validate_desired(h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "validate_desired: config": (
        lambda h, o: validate_desired(config=h),
        ("int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "resolve_quotas: source": (
        lambda h, o: resolve_quotas(h, Principal(user="a")),
        tuple(HOSTILE),
    ),
    "resolve_quotas: principal": (lambda h, o: resolve_quotas(o[1], h), tuple(HOSTILE)),
    "Target.live: properties": (
        lambda h, o: Target.live(h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Target.live: name": (
        lambda h, o: Target.live(ADDR, name=h),
        ("int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Target.live: policy": (
        lambda h, o: Target.live(ADDR, policy=h),
        ("str", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Target.of_snapshot: path": (
        lambda h, o: Target.of_snapshot(h),
        ("None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Entity.of": (
        lambda h, o: Entity.of(h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Principal: user": (
        lambda h, o: Principal(user=h),
        ("int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Policy: scope": (
        lambda h, o: Policy(scope=h),
        ("str", "int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Policy: max_removals": (
        lambda h, o: Policy(max_removals=h),
        ("str", "None", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Policy: max_removal_fraction": (
        lambda h, o: Policy(max_removal_fraction=h),
        ("str", "None", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
    "Policy: prune": (
        lambda h, o: Policy(prune=h),
        ("str", "None", "int", "bytes", "list-of-int", "object", "nan", "unknown-keys"),
    ),
    "Policy.build: scope": (
        lambda h, o: Policy.build(h),
        ("int", "bytes", "list-of-int", "object", "nan", "bool", "unknown-keys"),
    ),
}

CASES = [(name, kind) for name, (_, kinds) in CALLS.items() for kind in kinds]


@pytest.mark.parametrize(("name", "kind"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_a_wrong_type_is_kquotas_own_error(
    name: str, kind: str, offline: tuple[Target, LoadedDesired, Any]
) -> None:
    call, _ = CALLS[name]
    with pytest.raises(kquota.KquotaError) as raised:
        call(HOSTILE[kind], offline)
    message = str(raised.value)
    assert isinstance(raised.value, UsageError), message
    subject = name.split(": ")[-1] if kind != "unknown-keys" or ": " in name else name
    assert subject in message or name.split(":")[0] in message, message
    assert SECRET not in message and SECRET.lower() not in message.lower(), message


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda o: make_plan(o[0], o[1], principals="user=alice"),
            "make_plan: principals must be a list of kquota.Principal, not str",
        ),
        (
            lambda o: load_desired_state("quotas"),
            "load_desired_state: paths must be a list of paths, not a single str (write [path])",
        ),
        (
            lambda o: load_desired_state([None]),
            "load_desired_state: paths[0] must be a path (str or pathlib.Path), not None",
        ),
        (
            lambda o: resolve_quotas(o[1], {"user": "alice"}),
            "resolve_quotas: principal must be a kquota.Principal, not dict",
        ),
        (
            lambda o: make_plan("prod", o[1]),
            "make_plan: target must be a kquota.Target, not str",
        ),
        (
            lambda o: execute_plan(Target.live(ADDR), o[2], verify_timeout=math.nan),
            "execute_plan: verify_timeout must be a number more than 0 to 3600, not nan",
        ),
        (
            lambda o: execute_plan(Target.live(ADDR), o[2], batch_size=0),
            "execute_plan: batch_size must be from 1 to 100000, not 0",
        ),
        (
            lambda o: QuotaAdmin({"bootstrap.servers": None}),
            "QuotaAdmin: properties['bootstrap.servers'] must be str or int or float, not None",
        ),
        (
            lambda o: QuotaAdmin({**ADDR, SECRET: "x"}),
            "a client property name that is no property (not shown: it may be a secret)",
        ),
        (
            lambda o: _admin(lambda a: a.alter(({"user": "a"}, {"producer_byte_rate": 1}))),
            "alter: alterations must be a list, not a single alteration ([it])",
        ),
        (
            lambda o: Entity.of({"user": 5}),
            "Entity.of: an entity maps an entity type (str) to a name (str, or None for the "
            "default), not str: int",
        ),
        (
            lambda o: Policy(max_removal_fraction=2.0),
            "Policy: max_removal_fraction must be a number from 0 to 1, not 2.0",
        ),
        (
            lambda o: Target.of_snapshot(None),
            "Target.of_snapshot: path must be a path (str or pathlib.Path), not None",
        ),
    ],
)
def test_the_messages_say_what_is_allowed(
    call: Callable[[tuple[Target, LoadedDesired, Any]], object],
    message: str,
    offline: tuple[Target, LoadedDesired, Any],
) -> None:
    with pytest.raises(UsageError) as raised:
        call(offline)
    assert message in str(raised.value)


def test_right_types_still_work(offline: tuple[Target, LoadedDesired, Any], tmp_path: Path) -> None:
    target, desired, _ = offline
    assert make_plan(target, desired, principals=[Principal(user="bob")], prune=None).plan
    assert Entity.of({"client-id": None, "user": "a"}).types == ("user", "client-id")
    assert Policy.build([{"user": "team-*"}], max_removals=3).max_removals == 3
    assert Target.of_snapshot(str(tmp_path / "s.json")).snapshot_path == tmp_path / "s.json"
