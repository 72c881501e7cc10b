"""resolve --explain: the ladder and the verdicts agree with the resolver on every
combination of levels, and say why a level that sets a key does not apply."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from kquota.model import Entity
from kquota.plan.explain import explain
from kquota.plan.precedence import Level, candidate
from kquota.plan.resolver import resolve
from kquota.render.explain import render_explanation
from repo_root import ROOT

KEY = "producer_byte_rate"


@pytest.mark.parametrize(("user", "client"), [("alice", "app"), ("alice", ""), ("", "app")])
def test_every_combination_of_levels_agrees_with_the_resolver(user: str, client: str) -> None:
    for n in range(9):
        for levels in itertools.combinations(list(Level), n):
            # The candidates under the principal's own names (one naming an empty name cannot
            # exist on a broker).
            state = {
                candidate(lv, user, client): {KEY: float(lv)}
                for lv in levels
                if not any(name == "" for _, name in candidate(lv, user, client).parts)
            }
            found = explain(state, user, client)
            want = resolve(state, user, client).get(KEY)
            (verdict,) = [v for v in found.verdicts if v.key == KEY]
            assert (verdict.value, verdict.winner) == (
                (want.value, str(int(want.value))) if want else (None, None)
            )
            # Every level that sets the key is accounted for: the winner and each loser.
            present = {str(int(lv)) for lv in levels if candidate(lv, user, client) in state}
            named = {level for level, _ in verdict.reasons if level != "-"}
            assert named == present or (verdict.winner is None and not present)


def test_an_empty_client_id_says_why_user_default_client_does_not_apply() -> None:
    state = {
        Entity.of({"user": "alice", "client-id": None}): {KEY: 2.0},
        Entity.of({"user": None}): {KEY: 6.0},
    }
    found = explain(state, "alice", "")
    (verdict,) = [v for v in found.verdicts if v.key == KEY]
    assert verdict.winner == "6" and verdict.value == 6.0
    assert dict(verdict.reasons)["2"].startswith("not in the walk for user tag set and client-id")
    # The ladder lists all eight levels; the ones naming the empty client-id cannot exist.
    assert [r.level for r in found.ladder] == [str(i) for i in range(1, 9)]
    assert found.ladder[0].values is None


def test_ip_ladder_own_spelling_then_default() -> None:
    state = {
        Entity.of({"ip": "::ffff:10.0.0.1"}): {"connection_creation_rate": 5.0},
        Entity.of({"ip": None}): {"connection_creation_rate": 50.0},
    }
    found = explain(state, None, None, "10.0.0.1")
    (verdict,) = found.verdicts
    assert verdict.winner == "ip-2" and verdict.value == 5.0
    assert dict(verdict.reasons)["ip-3"] == "outranked by ip-2"
    assert [r.level for r in found.ladder] == ["ip-1", "ip-2", "ip-3"]


def test_text_and_json_name_the_winner_and_stay_safe() -> None:
    evil = "ev\x1bil"
    state = {
        Entity.of({"user": evil}): {KEY: 1024.0, "request_percentage": 50.0},
        Entity.of({"user": None, "client-id": None}): {KEY: 2048.0},
    }
    found = explain(state, evil, "app")
    text = render_explanation(found)
    assert "\x1b" not in text and "ev\\x1bil" in text
    # {user=U} sets the key, so the broker tracks (user, no client-id) and walks 3, 6: the
    # default user+client entity (level 5, higher in Kafka's list) never applies.
    assert re.search(r"producer_byte_rate=1024 from level 3 \{user=ev\\x1bil\}", text)
    assert "level 5 loses: not in the walk" in text
    assert "request_percentage=50 from level 3" in text
    assert "consumer_byte_rate=unlimited: no level sets it: unlimited" in text
    data = json.loads(json.dumps(found.to_data()))
    assert data["explain"][KEY]["winner"] == "3"
    assert data["quotas"][KEY]["value"] == 1024.0
    assert len(data["ladder"]) == 8 and data["ladder"][2]["exists"] is True


def test_the_precedence_document_exists_and_matches_the_levels() -> None:
    doc = (ROOT / "docs" / "precedence.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d) \| `(\{[^`]+\})` \|", doc, re.M)
    assert [int(n) for n, _ in rows] == list(range(1, 9))
    from kquota.model import display_entity

    for n, shown in rows:
        entity = candidate(Level(int(n)), "U", "C")
        assert display_entity(entity) == shown
    # The code cites the document that is in the repository, not one that is not.
    for name in ("precedence.py", "resolver.py", "explain.py"):
        text = (ROOT / "src" / "kquota" / "plan" / name).read_text(encoding="utf-8")
        assert "KAFKA-QUOTA-SEMANTICS" not in text and "docs/precedence.md" in text
