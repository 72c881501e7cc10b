"""The broker's two-step precedence reduces to Kafka's documented eight-level list whenever
the user and the client-id are both non-empty (the case the fleet's Spark join relies on)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kquota.plan.precedence import Level, choose

LEVELS = st.sets(st.sampled_from(list(Level)))


@settings(max_examples=300, deadline=None)
@given(LEVELS)
def test_non_empty_names_take_the_first_documented_level(present: set[Level]) -> None:
    assert choose(present, "alice", "etl") == (min(present) if present else None)


def test_an_empty_client_id_only_looks_at_user_levels() -> None:
    # The broker tracks such a client under (user, ""): user+default-client-id does not apply.
    assert (
        choose({Level.USER_DEFAULT_CLIENT, Level.DEFAULT_USER}, "alice", "") is Level.DEFAULT_USER
    )
    assert choose({Level.USER_DEFAULT_CLIENT}, "alice", "") is None


def test_no_user_name_with_only_a_default_user_quota_is_unlimited() -> None:
    assert choose({Level.DEFAULT_USER, Level.CLIENT}, "", "etl") is None
    assert choose({Level.DEFAULT_USER_CLIENT, Level.CLIENT}, "", "etl") is Level.CLIENT
