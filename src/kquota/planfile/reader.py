"""The strict reader of saved plans (``plan --out``): check one before apply connects.

A saved plan is untrusted input: anyone who can touch a CI artifact can edit it. So apply reads
it the way the loader reads desired-state YAML, never as kquota's own output:

- the JSON is the plan contract (``format_version`` 1): every field present and of its type,
  no unknown fields, no field given twice in one object (JSON readers disagree on which copy
  wins). The safety fields (``format_version``, ``cluster``, ``cluster_id``,
  ``snapshot_fingerprint``) must be set: a missing or null one is an error, never a check
  skipped;
- every alteration passes the rules the YAML loader applies (:mod:`kquota.desired.rules`):
  entity types and combination, ip literals, keys allowed for the entity's kind, values
  valid for the key (finite, > 0, whole and in range where the broker needs it);
- the summary is recomputed from the alterations; a file whose counts disagree is refused;
- the mass-removal guard is recomputed under the policy in force at apply time, and only the
  operator's ``--allow-mass-removal`` overrides it: the file's ``mass_removal_allowed`` is
  not a decision an artifact may make. After connecting, :func:`kquota.plan.guard.judge`
  counts the managed quotas again on the live cluster, so a file cannot shrink the guard's
  base either;
- alterations of entities outside the policy's ownership scope are refused;
- the recorded cluster is checked against the operator's target
  (:func:`kquota.planfile.target.check_target`); the plan never chooses where credentials
  are sent.

Every problem names the field path and what is allowed; all are reported at once. Pure but
for reading the file: no network.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path
from typing import Any

from kquota.desired import rules
from kquota.display import safe_text
from kquota.errors import KquotaError
from kquota.localfile import MiB, UnreadableFile, read_regular
from kquota.model import ENTITY_TYPES, IP, Entity, display_entity, sorted_by_entity
from kquota.plan.guard import GuardRefused, judge
from kquota.plan.types import (
    IMPACT_FIELDS,
    PLAN_FORMAT_VERSION,
    Alteration,
    ChangeKind,
    IgnoredGroup,
    IgnoreReason,
    Op,
    Plan,
    PlanImpact,
)
from kquota.policy import Policy, Removals

MAX_PLAN_BYTES = 1024 * MiB
"""The largest saved plan read: far above a real plan, far below what would exhaust memory."""

MAX_PLAN_VALUES = 32_000_000
"""The most JSON values (counted by their commas and brackets, before anything is parsed) a
saved plan may hold. Bytes alone do not bound memory: a real plan costs about 4 bytes of
memory per byte of file (about 20 values, 550 bytes, an alteration), while ``[[],[],...]``
costs over 30, so a 1 GiB file of it would need some 30 GiB. At about 110 bytes a value at
worst this is some 3.5 GiB, and room for 1.5 million alterations: kquota's largest measured
plan (999,006 entities, BENCHMARKS.md) holds about 20 million values."""

MAX_SHOWN = 20
"""A plan with more problems than this shows the first ones and a count."""

_MAX_DIGITS = 400
"""Integers longer than this are refused before Python converts them (a slow conversion)."""

PLAN_HELP = "a plan written by kquota plan --out"
_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{64}")
_CHANGES = {kind.word: kind for kind in ChangeKind}
_TOP = (
    "format_version",
    "cluster",
    "cluster_id",
    "snapshot_fingerprint",
    "desired_digest",
    "kquota_version",
    "created_at",
    "alterations",
    "summary",
    *IMPACT_FIELDS,
    "lookalikes",  # derived from the alterations for a reader (render/json.py); ignored
    "groups",  # the alterations grouped by change, for a reader (render/json.py); ignored
    "capacity",  # the capacity report (issue 23), for a reader; its guard's stop is kept
    "controller_notes",  # what other controllers will do (issue 23), for a reader; ignored
    "throttle_replay",  # the throttle replay (issue 30), for a reader; its guard's stop is kept
)
_META = ("created_at", "desired_digest", "kquota_version")
_OPTIONAL_TOP = frozenset(
    {
        *_META,
        *IMPACT_FIELDS,
        "lookalikes",
        "groups",
        "capacity",
        "controller_notes",
        "throttle_replay",
    }
)
_ALTERATION = ("entity", "change", "ops")
_OP = ("key", "value", "remove", "before")
_COUNTS = ("create", "update", "delete", "unchanged", "set_ops", "remove_ops")
_REMOVALS = ("quotas", "entities", "managed_quotas", "managed_entities")
_SUMMARY = (*_COUNTS, "ignored", "removals", "guard_violation", "mass_removal_allowed")
_NAME_HELP = "a non-empty string, or null for the default entity"
_IP_HELP = "an IPv4 or IPv6 literal such as 203.0.113.7 or 2001:db8::1, or null for the default"


class PlanFileError(KquotaError):
    """PlanFileError: a saved plan that must not be applied; one line per problem."""

    def __init__(self, name: str, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__(problem_lines(name, self.problems))


def problem_lines(name: str, problems: Sequence[str]) -> str:
    """problem_lines: a saved plan's problems, one line each, the first ones and a count."""
    shown = [f"{name}: {p}" for p in problems[:MAX_SHOWN]]
    if len(problems) > MAX_SHOWN:
        shown.append(f"{name}: … and {len(problems) - MAX_SHOWN} more problems")
    return "\n".join([*shown, "nothing was applied"])


class _Obj(dict[str, Any]):
    """_Obj is a JSON object that remembers the fields given more than once."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Obj:
    out = _Obj(pairs)
    if len(out) != len(pairs):
        names = [k for k, _ in pairs]
        out.repeated = tuple(k for k in dict.fromkeys(names) if names.count(k) > 1)
    return out


@dataclass(frozen=True)
class _LongNumber:
    """_LongNumber stands for an integer literal too long to be any quota value."""

    digits: int


def _int(text: str) -> int | _LongNumber:
    return _LongNumber(len(text.lstrip("-"))) if len(text) > _MAX_DIGITS else int(text)


def _kind(value: object) -> str:
    """_kind names a JSON value's type the way a reader of the file sees it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | _LongNumber):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


TargetCheck = Callable[[Plan], None]
"""A check of a well-formed plan's recorded cluster; raises :class:`PlanFileError`."""


class _Checker:
    """_Checker walks the parsed JSON, collecting problems as ``path: wrong; allowed: …``."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.guard_trips = False

    def add(self, path: str, wrong: str, allowed: str) -> None:
        self.problems.append(f"{path}: {wrong}; allowed: {allowed}")

    def fields(
        self, value: object, path: str, names: Sequence[str], optional: frozenset[str] = frozenset()
    ) -> _Obj | None:
        """fields checks that ``value`` is an object with exactly ``names`` (``optional`` may
        be absent); it returns the object, or None when it is not one."""
        label = path or "the file"
        if not isinstance(value, _Obj):
            self.add(
                path or "(top level)",
                f"{label} is {_kind(value)}, not an object",
                "an object with the fields " + ", ".join(names),
            )
            return None
        for name in value.repeated:
            self.add(_join(path, name), "given more than once", "each field once")
        for name in value:
            if name not in names:
                self.add(_join(path, name), "unknown field", "the fields " + ", ".join(names))
        for name in names:
            if name not in value and name not in optional:
                self.add(_join(path, name), "missing", FIELD_HELP.get(name, "see the contract"))
        return value

    def text(self, value: object, path: str, allowed: str, *, null: bool = False) -> str | None:
        if value is None and null:
            return None
        if not isinstance(value, str) or not value:
            shown = "an empty string" if value == "" else _kind(value)
            self.add(path, f"{shown} is not allowed here", allowed)
            return None
        return value

    def count_in(self, obj: _Obj, key: str, path: str) -> int | None:
        """count_in checks ``obj[key]`` as a count (a missing field is reported already)."""
        return self.count(obj[key], _join(path, key)) if key in obj else None

    def count(self, value: object, path: str) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            shown = repr(value) if isinstance(value, int | float) else _kind(value)
            self.add(path, f"{shown} is not a count", "a whole number ≥ 0")
            return None
        return value


FIELD_HELP = {
    "format_version": str(PLAN_FORMAT_VERSION),
    "cluster": "the cluster name or bootstrap servers the plan was made for",
    "cluster_id": "the id of the cluster the plan was made for",
    "snapshot_fingerprint": "sha256: and 64 hex digits",
    "alterations": "a list of alterations",
    "summary": "the plan's summary object",
    "entity": "an object of entity type to name",
    "change": "create, update or delete",
    "ops": "a list of ops",
    "key": "a quota key",
    "value": "a number (set) or null (remove)",
    "remove": "true or false",
    "before": "the cluster's value when planned, or null",
}


def _join(path: str, name: str) -> str:
    # Field names come from the file: a hostile one must not reach the terminal raw.
    name = safe_text(name)
    return f"{path}.{name}" if path else name


def load_plan_file(
    path: Path, policy: Policy, *, review: bool = False, target: TargetCheck | None = None
) -> Plan:
    """load_plan_file reads and checks a saved plan under ``policy`` (the one in force now).

    PlanFileError for every problem found, each naming the field and what is allowed.
    ``review`` (``kquota show``): a plan is read to be shown, not applied, so a null safety
    field (a fleet plan records no cluster id) is let through; :func:`unapplyable_because`
    says what apply would refuse. Every other check is the same. ``target`` checks the plan's
    recorded cluster before any guard is judged (:func:`parse_plan`).
    """
    return parse_plan(read_plan_bytes(path), str(path), policy, review=review, target=target)


def read_plan_bytes(path: Path) -> bytes:
    """read_plan_bytes is a saved plan's file, bounded; PlanFileError if it cannot be read."""
    try:
        return read_regular(path, limit=MAX_PLAN_BYTES, larger="plan a smaller change")
    except UnreadableFile as e:
        raise PlanFileError(
            str(path), [f"cannot read the saved plan: {e.reason}; allowed: {e.allowed}"]
        ) from None


def parse_plan(
    data: bytes,
    name: str,
    policy: Policy,
    *,
    review: bool = False,
    target: TargetCheck | None = None,
) -> Plan:
    """parse_plan checks the bytes of a saved plan; ``name`` labels the problems (``review``:
    as for :func:`load_plan_file`).

    ``target`` (apply: :func:`kquota.planfile.target.check_target` for the operator's target)
    runs once the plan is well formed and before the guards are judged: a plan made for another
    cluster is refused as that, not by a guard counted under the wrong cluster's policy.
    """
    too_many = values_problem(data)
    if too_many is not None:
        raise PlanFileError(name, [too_many])
    try:
        doc = json.loads(
            data.decode("utf-8"), object_pairs_hook=_object, parse_int=_int, parse_constant=float
        )
    except UnicodeDecodeError:
        raise PlanFileError(name, [f"not UTF-8 text; allowed: {PLAN_HELP}"]) from None
    except json.JSONDecodeError as e:
        raise PlanFileError(
            name, [f"not JSON: {e.msg} (line {e.lineno}, column {e.colno}); allowed: {PLAN_HELP}"]
        ) from None
    except RecursionError:
        raise PlanFileError(name, [f"JSON nested too deeply; allowed: {PLAN_HELP}"]) from None
    check = _Checker()
    plan = _plan(doc, check, policy, review, target)
    if check.guard_trips and len(check.problems) == 1:  # a well-formed plan the guard holds
        raise GuardRefused(problem_lines(name, check.problems))
    if check.problems or plan is None:
        raise PlanFileError(name, check.problems)
    return plan


def values_problem(data: bytes) -> str | None:
    """values_problem refuses JSON with more values than :data:`MAX_PLAN_VALUES`, before it is
    parsed (a comma in a string counts too: the count only errs on the safe side)."""
    count = data.count(b",") + data.count(b"[") + data.count(b"{")
    if count <= MAX_PLAN_VALUES:
        return None
    return (
        f"too many JSON values to read ({count} counted, by commas and brackets; the limit is "
        f"{MAX_PLAN_VALUES}, about 1.5 million alterations): a file this dense would exhaust "
        "memory before it could be checked; allowed: plan a smaller change"
    )


def reread(plan: Plan, name: str, policy: Policy, target: TargetCheck | None = None) -> Plan:
    """reread checks a plan held in memory exactly as a saved one: it is written to its JSON
    contract and read back by :func:`parse_plan`, so a program applies nothing the CLI would
    refuse to read (``name`` labels the problems)."""
    from kquota.render.json import render_plan

    return parse_plan(render_plan(plan).encode(), name, policy, target=target)


def _plan(
    doc: object,
    check: _Checker,
    policy: Policy,
    review: bool = False,
    target: TargetCheck | None = None,
) -> Plan | None:
    top = check.fields(doc, "", _TOP, _OPTIONAL_TOP)
    if top is None:
        return None
    if "format_version" not in top:
        return None  # reported missing: without it the other fields mean nothing certain
    version = top["format_version"]
    if type(version) is not int or version != PLAN_FORMAT_VERSION:
        shown = repr(version) if isinstance(version, int | float | str) else _kind(version)
        check.add(
            "format_version",
            f"{shown} is not a plan format this kquota reads",
            f"{PLAN_FORMAT_VERSION} (plan again with this kquota)",
        )
        return None  # another format: its other fields mean something else

    def text(key: str, allowed: str, *, null: bool = False) -> str | None:
        return check.text(top[key], key, allowed, null=null) if key in top else None

    cluster = text("cluster", FIELD_HELP["cluster"], null=review)
    cluster_id = text(
        "cluster_id",
        "the id of the cluster the plan was made for: plan against the live cluster, or a "
        "snapshot written by kquota snapshot",
        null=review,
    )
    fingerprint = top.get("snapshot_fingerprint")
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        if "snapshot_fingerprint" in top and not (review and fingerprint is None):
            shown = "a malformed string" if isinstance(fingerprint, str) else _kind(fingerprint)
            check.add(
                "snapshot_fingerprint",
                f"{shown} is not a snapshot fingerprint",
                FIELD_HELP["snapshot_fingerprint"],
            )
        fingerprint = None
    meta = {k: text(k, "a non-empty string or null", null=True) for k in _META}
    alterations = _alterations(top["alterations"], check) if "alterations" in top else None
    summary = check.fields(top["summary"], "summary", _SUMMARY) if "summary" in top else None
    if alterations is None or summary is None or check.problems:
        return None
    plan = _with_summary(alterations, summary, check)
    if plan is None:
        return None
    _check_scope(alterations, policy, check)
    plan = replace(
        plan,
        cluster=cluster,
        cluster_id=cluster_id,
        snapshot_fingerprint=fingerprint,
        desired_digest=meta["desired_digest"],
        kquota_version=meta["kquota_version"],
        created_at=meta["created_at"],
    )
    if target is not None and not check.problems:
        target(plan)
    if "impact" in top:
        plan = replace(plan, impact=_impact(top["impact"], check))
    if not policy.allow_oversubscription:
        _capacity_verdict(top.get("capacity"), check)
    _throttle_verdict(top.get("throttle_replay"), check)
    plan = judge(plan, policy)
    if plan.guard_violation is not None and not plan.mass_removal_allowed:
        check.guard_trips = True
        check.add(
            "summary.guard_violation",
            f"the mass-removal guard trips: {plan.guard_violation}",
            "a plan within the policy's limits, or apply with "
            "--allow-mass-removal after review (the plan file cannot allow it)",
        )
    return plan


def _capacity_verdict(value: object, check: _Checker) -> None:
    """A saved plan the capacity guard stopped (issue 23) stays stopped, whatever apply then
    counts again from the cluster's facts (a stop in the file refuses, its absence allows
    nothing: apply recomputes the guard, :mod:`kquota.operations.apply`); only the
    operator's ``--allow-oversubscription`` passes it. The rest of the report is for
    readers."""
    if not isinstance(value, Mapping):
        return
    stops = value.get("oversubscription_stops")
    if stops and not value.get("oversubscription_allowed"):
        check.add(
            "capacity.oversubscription_stops",
            "the capacity guard stopped this plan",
            "a plan within max_oversubscription, or apply with --allow-oversubscription after"
            " review (the plan file cannot allow it)",
        )


def _throttle_verdict(value: object, check: _Checker) -> None:
    """A saved plan the throttle guard stopped (issue 30) stays stopped, as the capacity
    guard's does: apply reads no usage, so only a plan made again with
    ``--allow-throttling`` passes. The rest of the replay is for readers."""
    if not isinstance(value, Mapping):
        return
    stops = value.get("throttling_stops")
    if stops and not value.get("throttling_allowed"):
        check.add(
            "throttle_replay.throttling_stops",
            "the throttle guard stopped this plan",
            "a plan made again with kquota plan --usage --allow-throttling after review",
        )


def _impact(value: object, check: _Checker) -> PlanImpact:
    """_impact reads the principals a saved plan's impact names: apply resolves them again
    on the live cluster (:func:`kquota.plan.guard.judge`), so values and verdict in the file
    count for nothing; only the names are taken, each checked."""
    from kquota.principal import Principal, unique_principals

    allowed = 'a list of {"principal": {"user"|"client-id"|"ip": name}, "key", "before", "after"}'
    found: list[Principal] = []
    if not isinstance(value, list):
        check.add("impact", f"{_kind(value)} is not a list", allowed)
        return PlanImpact(())
    for i, raw in enumerate(value):
        who = raw.get("principal") if isinstance(raw, dict) else None
        names = who if isinstance(who, dict) else {}
        good = bool(names) and all(
            t in ("user", "client-id", "ip") and isinstance(n, str) and n for t, n in names.items()
        )
        if not good:
            check.add(f"impact[{i}].principal", f"{_kind(who)} is not a principal", allowed)
            continue
        found.append(Principal(names.get("user"), names.get("client-id"), names.get("ip")))
    return PlanImpact((), resolved=unique_principals(found))


def _alterations(value: object, check: _Checker) -> list[tuple[int, Alteration]] | None:
    if not isinstance(value, list):
        check.add("alterations", f"{_kind(value)} is not a list", "a list of alterations")
        return None
    out: list[tuple[int, Alteration]] = []
    first: dict[Entity, int] = {}
    for i, raw in enumerate(value):
        alt = _alteration(raw, f"alterations[{i}]", check)
        if alt is None:
            continue
        if alt.entity in first:
            check.add(
                f"alterations[{i}].entity",
                f"{display_entity(alt.entity)} is also alterations[{first[alt.entity]}]",
                "one alteration per entity",
            )
            continue
        first[alt.entity] = i
        out.append((i, alt))
    return out


def _alteration(raw: object, path: str, check: _Checker) -> Alteration | None:
    obj = check.fields(raw, path, _ALTERATION)
    if obj is None:
        return None
    entity = _entity(obj["entity"], f"{path}.entity", check) if "entity" in obj else None
    change = obj.get("change")
    kind = _CHANGES.get(change) if isinstance(change, str) else None
    if kind is None and "change" in obj:
        shown = repr(change) if isinstance(change, str) else _kind(change)
        check.add(f"{path}.change", f"{shown} is not a change", FIELD_HELP["change"])
    types = None if entity is None else entity.types
    raw_ops = obj.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        shown = "an empty list" if raw_ops == [] else _kind(raw_ops)
        if "ops" in obj:
            check.add(f"{path}.ops", f"{shown} is not allowed here", "a non-empty list of ops")
        return None
    ops: list[Op] = []
    keys: dict[str, int] = {}
    for j, raw_op in enumerate(raw_ops):
        op = _op(raw_op, f"{path}.ops[{j}]", types, check)
        if op is None:
            continue
        if op.key in keys:
            check.add(
                f"{path}.ops[{j}].key",
                f"{op.key} is also ops[{keys[op.key]}]",
                "each key once per alteration",
            )
            continue
        keys[op.key] = j
        ops.append(op)
    if entity is None or kind is None or len(ops) != len(raw_ops):
        return None
    wrong = _kind_problem(kind, ops)
    if wrong is not None:
        check.add(
            f"{path}.change", wrong, "create (only new keys), update, or delete (only removals)"
        )
        return None
    return Alteration(entity, tuple(sorted(ops, key=lambda o: o.key)), kind)


def _kind_problem(kind: ChangeKind, ops: list[Op]) -> str | None:
    if kind is ChangeKind.CREATE and any(op.remove or op.before is not None for op in ops):
        return "create, but an op changes or removes an existing key"
    if kind is ChangeKind.DELETE and not all(op.remove for op in ops):
        return "delete, but an op sets a value"
    return None


def _entity(raw: object, path: str, check: _Checker) -> Entity | None:
    allowed = f"an object of entity type ({rules.ENTITY_TYPES_HELP}) to a name or null"
    if not isinstance(raw, _Obj) or not raw:
        check.add(
            path, f"{'an empty object' if raw == {} else _kind(raw)} is not an entity", allowed
        )
        return None
    ok = not raw.repeated
    for name in raw.repeated:
        check.add(_join(path, name), "given more than once", "each entity type once")
    parts: dict[str, str | None] = {}
    for etype, name in raw.items():
        if etype not in ENTITY_TYPES:
            check.add(_join(path, etype), f"unknown entity type {etype!r}", rules.ENTITY_TYPES_HELP)
            ok = False
        elif name is not None and (not isinstance(name, str) or not name):
            shown = "an empty string" if name == "" else _kind(name)
            help_ = _IP_HELP if etype == IP else _NAME_HELP
            check.add(_join(path, etype), f"{shown} is not an entity name", help_)
            ok = False
        else:
            parts[etype] = name
    if not ok:
        return None
    bad = rules.combination_problem(tuple(parts))
    ip = parts.get(IP)
    if bad is None and ip is not None:
        bad = rules.ip_problem(ip)
        bad = None if bad is None else (bad[0], _IP_HELP)  # JSON writes the default as null
    for part_type, part_name in parts.items():
        if bad is None and part_name is not None:
            # Only the protocol's limit: a plan may rightly carry control characters (a name
            # declared verbatim, or one the cluster holds that prune removes) without saying so.
            bad = rules.name_problem(part_type, part_name, verbatim=True)
    if bad is not None:
        check.add(path, *bad)
        return None
    return Entity.of_checked(parts)


def _op(raw: object, path: str, types: tuple[str, ...] | None, check: _Checker) -> Op | None:
    """_op checks one op; ``types`` are its entity's (None when the entity is invalid)."""
    obj = check.fields(raw, path, _OP)
    if obj is None or any(f not in obj for f in _OP):
        return None
    key, value, remove, before = (obj[f] for f in _OP)
    ok = True
    if not isinstance(key, str):
        check.add(f"{path}.key", f"{_kind(key)} is not a quota key", FIELD_HELP["key"])
        return None
    if types is not None:
        bad = rules.key_problem(key, types)
        if bad is not None:
            check.add(f"{path}.key", *bad)
            return None
    if not isinstance(remove, bool):
        check.add(f"{path}.remove", f"{_kind(remove)} is not allowed here", "true or false")
        return None
    number: float | None = None
    if remove:
        if value is not None:
            check.add(f"{path}.value", f"{_kind(value)} in a removal", "null when remove is true")
            ok = False
    elif types is not None:
        got = _quota_value(key, value)
        if isinstance(got, float):
            number = got
        else:
            check.add(f"{path}.value", *got)
            ok = False
    good_before, was = _before(before, f"{path}.before", remove, check)
    if not ok or not good_before or types is None:
        return None
    return Op(key=key, value=number, remove=remove, before=was)


def _before(raw: object, path: str, remove: bool, check: _Checker) -> tuple[bool, float | None]:
    """_before checks the recorded value: (whether it is fine, the value or None for null).

    The recorded value is what the cluster held, which the broker's own (looser) rules let in,
    so only its type is checked; a removal records the value it removes.
    """
    if raw is None:
        if remove:
            check.add(path, "null in a removal", "the value the removal takes away")
            return False, None
        return True, None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        shown = "a non-finite number" if isinstance(raw, float) else _kind(raw)
        check.add(path, f"{shown} is not a recorded value", "a finite number, or null")
        return False, None
    try:
        return True, float(raw)
    except OverflowError:
        check.add(path, "too large for a double", "a finite number, or null")
        return False, None


def _quota_value(key: str, raw: object) -> float | rules.Complaint:
    """_quota_value applies the YAML loader's value rules to a JSON value (numbers only)."""
    allowed = rules.allowed_values(key, sizes=False)
    if isinstance(raw, _LongNumber):
        return (f"a {raw.digits}-digit number is too large", allowed)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return (f"{_kind(raw)} is not a quota value", allowed)
    got = rules.quota_value(key, raw)
    return got if isinstance(got, float) else (got[0], allowed)


def _with_summary(
    alterations: list[tuple[int, Alteration]], summary: _Obj, check: _Checker
) -> Plan | None:
    """_with_summary builds the plan and refuses a summary its alterations contradict."""
    counts = {k: check.count_in(summary, k, "summary") for k in _COUNTS}
    if "ignored" not in summary or "removals" not in summary:
        return None
    ignored = check.fields(
        summary["ignored"], "summary.ignored", tuple(r.value for r in IgnoreReason)
    )
    removals = check.fields(summary["removals"], "summary.removals", _REMOVALS)
    if ignored is None or removals is None:
        return None
    ignored_counts = {r: check.count_in(ignored, r.value, "summary.ignored") for r in IgnoreReason}
    removed = {k: check.count_in(removals, k, "summary.removals") for k in _REMOVALS}
    guard = summary.get("guard_violation")
    if guard is not None and not isinstance(guard, str):
        check.add(
            "summary.guard_violation", f"{_kind(guard)} is not allowed here", "a string or null"
        )
    if "mass_removal_allowed" in summary and not isinstance(summary["mass_removal_allowed"], bool):
        check.add(
            "summary.mass_removal_allowed",
            f"{_kind(summary.get('mass_removal_allowed'))} is not allowed here",
            "true or false",
        )
    if check.problems:
        return None
    alts = tuple(sorted_by_entity((a for _, a in alterations), attrgetter("entity")))
    plan = Plan(
        alterations=alts,
        unchanged=counts["unchanged"] or 0,
        ignored=tuple(IgnoredGroup(r, n) for r, n in ignored_counts.items() if n),
    )
    truth = plan.summary()
    recomputed = {
        **{k: truth[k] for k in _COUNTS},
        "removals.quotas": plan.remove_ops,
        "removals.entities": plan.count(ChangeKind.DELETE),
    }
    said = {**counts, **{f"removals.{k}": removed[k] for k in ("quotas", "entities")}}
    for field, want in recomputed.items():
        if said[field] != want:
            check.add(
                f"summary.{field}",
                f"the file says {said[field]}, but its alterations make {want}",
                "the counts of the plan's own alterations (the summary is "
                "recomputed, never trusted)",
            )
    managed_q, managed_e = removed["managed_quotas"] or 0, removed["managed_entities"] or 0
    if managed_q < plan.remove_ops:
        check.add(
            "summary.removals.managed_quotas",
            f"{managed_q} is fewer than the {plan.remove_ops} quota values the plan removes",
            f"at least {plan.remove_ops}",
        )
    if check.problems:
        return None
    return replace(
        plan,
        removals=Removals(plan.remove_ops, plan.count(ChangeKind.DELETE), managed_q, managed_e),
    )


def _check_scope(
    alterations: list[tuple[int, Alteration]], policy: Policy, check: _Checker
) -> None:
    if policy.scope is None:
        return
    scope = ", ".join(str(m.to_data()) for m in policy.scope)
    for i, alt in alterations:
        if not policy.in_scope(alt.entity):
            check.add(
                f"alterations[{i}].entity",
                f"{display_entity(alt.entity)} is outside the cluster's ownership scope",
                f"entities the policy's scope covers: {scope}",
            )


def read_plan(path: Path, policy: Policy | None = None) -> Plan:
    """read_plan reads a saved plan as ``kquota apply PLAN.json`` does, with every check of
    the file (:func:`load_plan_file`) under ``policy`` (default: kquota's defaults, the
    target's policy applies again at :func:`kquota.execute_plan`). Raises
    :class:`PlanFileError`, or :class:`~kquota.plan.guard.GuardRefused` for a plan only the
    mass-removal guard holds back."""
    from kquota import argcheck as check

    checked = check.path(path, "read_plan: path")
    check.optional(policy, Policy, "read_plan: policy", "a kquota.Policy")
    return load_plan_file(checked, policy or Policy())


__all__ = [
    "MAX_PLAN_BYTES",
    "MAX_PLAN_VALUES",
    "PLAN_HELP",
    "PlanFileError",
    "load_plan_file",
    "parse_plan",
    "problem_lines",
    "read_plan",
    "reread",
]
