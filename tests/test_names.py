"""kquota.names: one address, one spelling; desired ip names meet the cluster's spellings."""

from __future__ import annotations

import pytest

from kquota.model import Entity
from kquota.names import as_cluster_spells, canonical_ip, held_twice, unusual_name
from kquota.plan.planner import plan
from kquota.policy import Policy


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("10.0.0.1", "10.0.0.1"),
        ("::FFFF:10.0.0.1", "10.0.0.1"),  # Java's InetAddress reads it as the IPv4 address
        ("::ffff:a00:1", "10.0.0.1"),
        ("2001:DB8::1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("0:0:0:0:0:0:0:1", "::1"),
        ("::1.2.3.4", "::102:304"),  # IPv4-compatible (not mapped) stays IPv6, as in Java
        ("fe80::1%eth0", None),  # zone ids are refused
        ("localhost", None),
        ("010.0.0.1", None),  # leading zeros: ambiguous (octal to some readers)
        ("10.1", None),  # Java would read 10.0.0.1; refused rather than guessed
        ("", None),
    ],
)
def test_canonical_ip(written: str, canonical: str | None) -> None:
    assert canonical_ip(written) == canonical


@pytest.mark.parametrize(
    ("name", "unusual"),
    [
        ("alice", False),
        ("é and ü", False),
        (" alice", True),
        ("alice\u00a0", True),
        ("a\tb", True),
        ("bob\u200b", True),
        ("\u202eevil", True),
        ("a\x1b[31m", True),
    ],
)
def test_unusual_name(name: str, unusual: bool) -> None:
    assert unusual_name(name) is unusual


def ip(name: str | None) -> Entity:
    return Entity.of({"ip": name})


RATE = {"connection_creation_rate": 10.0}


def test_as_cluster_spells_takes_the_cluster_spelling() -> None:
    desired = {ip("2001:db8::1"): RATE, ip("10.0.0.1"): RATE, ip(None): RATE}
    cluster = {ip("2001:DB8::1"): RATE, ip("::ffff:10.0.0.1"): RATE, ip(None): RATE}
    assert as_cluster_spells(desired, cluster) == {
        ip("2001:DB8::1"): RATE,
        ip("::ffff:10.0.0.1"): RATE,
        ip(None): RATE,
    }


def test_as_cluster_spells_keeps_an_exact_match_and_picks_one_of_several() -> None:
    desired = {ip("10.0.0.1"): RATE, ip("2001:db8::1"): RATE}
    cluster = {
        ip("::FFFF:10.0.0.1"): RATE,
        ip("10.0.0.1"): RATE,  # the exact spelling wins over another one
        ip("2001:DB8:0::1"): RATE,
        ip("2001:DB8::1"): RATE,  # of two other spellings, the first by name
    }
    assert set(as_cluster_spells(desired, cluster)) == {ip("10.0.0.1"), ip("2001:DB8:0::1")}


def test_plan_two_spellings_are_one_entity() -> None:
    cluster = {ip("2001:DB8::1"): RATE, ip("::FFFF:10.0.0.1"): {"connection_creation_rate": 5.0}}
    desired = {ip("2001:db8::1"): RATE, ip("10.0.0.1"): RATE}
    got = plan(desired, cluster, Policy(prune=True))
    # No create of the canonical spelling and no removal of the cluster's: one update, made
    # on the entity the broker holds.
    assert [(a.entity, a.kind.word) for a in got.alterations] == [(ip("::FFFF:10.0.0.1"), "update")]
    assert got.unchanged == 1


def test_held_twice_lists_addresses_with_several_spellings() -> None:
    cluster = {
        ip("10.0.0.1"): RATE,
        ip("::ffff:10.0.0.1"): RATE,
        ip("2001:DB8::1"): RATE,
        ip("2001:db8:0::1"): RATE,
        ip("2001:db8::2"): RATE,  # one spelling only
        ip("::FFFF:10.0.0.9"): RATE,  # one (non-canonical) spelling only
        ip(None): RATE,
        Entity.of({"user": "::1"}): RATE,
    }
    assert held_twice(cluster) == [
        ("10.0.0.1", "::ffff:10.0.0.1"),
        ("2001:DB8::1", "2001:db8:0::1"),
    ]
