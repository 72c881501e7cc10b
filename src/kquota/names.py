"""Entity names as the broker reads them, shared by the loader, the planner and export.

ip names: one address, one canonical spelling.

The broker stores an ip entity's name exactly as given (``2001:DB8::1`` and ``2001:db8::1``
are two stored entities, confirmed on Kafka 4.3.1) but enforces connection-rate quotas by
the address Java's ``InetAddress.getByName`` makes of it, so two spellings of one address are
one enforced limit. kquota therefore compares ip names by :func:`canonical_ip`: IPv6
compressed and lower-case, and an IPv4-mapped IPv6 address (``::ffff:10.0.0.1``) as the
IPv4 address Java turns it into. Zone ids (``fe80::1%eth0``) are refused: they name an
interface of one host, and the broker refuses the ones it cannot resolve.

user and client-id names: the broker takes any non-empty string, but a name with control or
invisible characters, or with whitespace around it, is almost always a mistake. Such a name
is :func:`unusual_name`; the loader refuses or warns about it unless it is declared
``{name: "...", verbatim: true}``, which is how export writes it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TypeVar

from kquota.confusables import invisible_chars
from kquota.model import IP, Entity

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def ip_address(name: str) -> Address | None:
    """ip_address is the address an IP literal names, or None (hostnames, zone ids)."""
    if "%" in name:
        return None
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def canonical_ip(name: str) -> str | None:
    """canonical_ip is the one spelling kquota uses for an IP literal, or None."""
    address = ip_address(name)
    return None if address is None else str(address)


def unusual_name(name: str) -> bool:
    """unusual_name: the name has control, format or other invisible characters (anything
    Python's ``str.isprintable`` refuses, and the default-ignorable and blank characters it
    accepts, such as U+3164 HANGUL FILLER: see :mod:`kquota.confusables`) or whitespace
    around it."""
    return not name.isprintable() or name != name.strip() or bool(invisible_chars(name))


V = TypeVar("V")


def as_cluster_spells(
    desired: Mapping[Entity, V], cluster: Mapping[Entity, object]
) -> dict[Entity, V]:
    """as_cluster_spells renames desired ip entities to the cluster's spelling of the address.

    Desired names are canonical (the loader makes them so); the cluster keeps whatever
    spelling each entity was created with. Where the cluster holds an address only under
    another spelling (``2001:DB8::1`` for ``2001:db8::1``), the desired entity takes that
    spelling, so a plan updates the entity the broker has instead of creating a second record
    for one address and removing the first. With several other spellings, the first by name
    is taken (the rest stay undeclared). Pure; other entities are untouched.
    """
    renames: dict[Entity, Entity] = {}
    for entity in cluster:
        parts = entity.parts
        if len(parts) != 1 or parts[0][0] != IP or parts[0][1] is None:
            continue
        name = parts[0][1]
        if ":" not in name:
            continue  # IPv4 has one spelling that Python and Java both read (no leading 0s)
        canonical = canonical_ip(name)
        if canonical is None or canonical == name:
            continue
        mine = Entity(((IP, canonical),))
        if mine not in desired or mine in cluster:
            continue
        taken = renames.get(mine)
        if taken is None or name < (taken.parts[0][1] or ""):
            renames[mine] = entity
    if not renames:
        return desired if isinstance(desired, dict) else dict(desired)
    return {renames.get(e, e): v for e, v in desired.items()}


def held_twice(cluster: Mapping[Entity, object]) -> list[tuple[str, ...]]:
    """held_twice lists the addresses the cluster holds under several spellings, each as its
    spellings sorted. The broker enforces one limit per address, the one written last, and
    removing any spelling removes that limit: such a cluster needs a person to look at it."""
    groups: dict[str, set[str]] = {}
    names: set[str] = set()
    for entity in cluster:
        parts = entity.parts
        if len(parts) != 1 or parts[0][0] != IP or parts[0][1] is None:
            continue
        name = parts[0][1]
        names.add(name)
        if ":" in name:  # IPv4 spellings are canonical already (see as_cluster_spells)
            canonical = canonical_ip(name)
            if canonical is not None and canonical != name:
                groups.setdefault(canonical, set()).add(name)
    out = []
    for canonical, spellings in groups.items():
        if canonical in names:
            spellings.add(canonical)
        if len(spellings) > 1:
            out.append(tuple(sorted(spellings)))
    return sorted(out)
