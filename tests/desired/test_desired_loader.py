"""load_desired: merging files and folders, profiles, overlays, sources and the digest."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kquota.desired import DesiredState, DesiredStateError, SourceLocation, load_desired
from kquota.model import Entity
from repo_root import ROOT

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\n"
OVERLAY = "apiVersion: kquota/v1\nkind: ClientQuotasOverlay\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def problems(paths: list[Path]) -> list[str]:
    with pytest.raises(DesiredStateError) as info:
        load_desired(paths)
    return [str(p) for p in info.value.problems]


def alice() -> Entity:
    return Entity.of({"user": "alice"})


def test_desired_canonical_example(tmp_path: Path) -> None:
    f = write(
        tmp_path / "q.yaml",
        HEAD + "quotas:\n"
        "  - match: {user: alice, client-id: <default>}\n"
        "    set: {producer_byte_rate: 1048576, request_percentage: 150}\n"
        "  - match: {ip: 203.0.113.7}\n"
        "    set: {connection_creation_rate: 10}\n",
    )
    state = load_desired([f])
    assert state.quotas == {
        Entity.of({"user": "alice", "client-id": None}): {
            "producer_byte_rate": 1048576.0,
            "request_percentage": 150.0,
        },
        Entity.of({"ip": "203.0.113.7"}): {"connection_creation_rate": 10.0},
    }
    assert state.sources[Entity.of({"ip": "203.0.113.7"})] == SourceLocation(str(f), 6, 5)
    assert state.files == (str(f),)
    assert all(isinstance(v, float) for vals in state.quotas.values() for v in vals.values())


def test_desired_folder_is_read_recursively_sorted_skipping_hidden(tmp_path: Path) -> None:
    write(
        tmp_path / "b.yaml",
        HEAD + "quotas:\n  - match: {user: b}\n    set: {request_percentage: 1}\n",
    )
    write(
        tmp_path / "a/z.yml",
        HEAD + "quotas:\n  - match: {user: z}\n    set: {request_percentage: 1}\n",
    )
    write(tmp_path / ".git/x.yaml", "not: [valid")
    write(tmp_path / ".hidden.yaml", "not: [valid")
    write(tmp_path / "notes.txt", "not yaml")
    state = load_desired([tmp_path])
    assert state.files == (str(tmp_path / "a/z.yml"), str(tmp_path / "b.yaml"))
    assert len(state.quotas) == 2


def test_desired_same_file_twice_is_read_once(tmp_path: Path) -> None:
    f = write(
        tmp_path / "q.yaml",
        HEAD + "quotas:\n  - match: {user: a}\n    set: {request_percentage: 1}\n",
    )
    assert load_desired([tmp_path, f]).files == (str(f),)


def test_desired_duplicate_entity_across_files_names_both_places(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.yaml",
        HEAD + "quotas:\n  - match: {user: alice}\n    set: {request_percentage: 1}\n",
    )
    b = write(
        tmp_path / "b.yaml",
        HEAD + "quotas:\n  - match: {user: bob}\n    set: {request_percentage: 1}\n"
        "  - match: {user: alice}\n    set: {request_percentage: 2}\n",
    )
    assert problems([tmp_path]) == [
        f"{b}:6:5: duplicate entity {{user=alice}}: also declared at {a}:4:5; allowed: each "
        "entity once among base files and once among overlays (an overlay replaces the base entry)"
    ]


def test_desired_all_problems_of_all_files_at_once(tmp_path: Path) -> None:
    write(
        tmp_path / "a.yaml",
        HEAD + "quotas:\n  - match: {user: a}\n    set: {request_percentage: 0}\n",
    )
    write(tmp_path / "b.yaml", "apiVersion: kquota/v1\nkind: Nope\n")
    write(tmp_path / "c.yaml", "{")
    got = problems([tmp_path, tmp_path / "missing"])
    assert [line.split(":")[0].rsplit("/", 1)[-1] for line in got] == [
        "a.yaml",
        "b.yaml",
        "c.yaml",
        "missing",
    ]


def test_desired_missing_path_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    got = problems([tmp_path / "nope.yaml", tmp_path / "empty"])
    assert got[0].endswith(
        "empty: no *.yaml or *.yml files in this folder; allowed: a folder "
        "with desired-state files (an empty desired state needs a file with quotas: [])"
    )
    assert got[1] == f"{tmp_path / 'nope.yaml'}: no such file or folder; allowed: an existing path"


def test_desired_explicitly_empty_state(tmp_path: Path) -> None:
    state = load_desired([write(tmp_path / "q.yaml", HEAD + "quotas: []\n")])
    assert state.quotas == {} and state.sources == {}


def test_desired_literal_default_name(tmp_path: Path) -> None:
    f = write(
        tmp_path / "q.yaml",
        HEAD + "quotas:\n"
        "  - match: {user: <default>}\n    set: {request_percentage: 1}\n"
        '  - match: {user: {name: "<default>"}}\n    set: {request_percentage: 2}\n'
        '  - match: {user: "<default>"}\n    set: {request_percentage: 3}\n',
    )
    # Quoting does not make <default> literal: only the {name: ...} form does.
    assert any("duplicate entity" in p and ":8:5:" in p for p in problems([f]))
    state = load_desired([write(f, f.read_text().rsplit('  - match: {user: "', 1)[0])])
    assert state.quotas == {
        Entity.of({"user": None}): {"request_percentage": 1.0},
        Entity.of({"user": "<default>"}): {"request_percentage": 2.0},
    }


def test_desired_profiles_and_overrides(tmp_path: Path) -> None:
    write(
        tmp_path / "profiles.yaml",
        HEAD + "profiles:\n  gold: {producer_byte_rate: 10MiB, request_percentage: 200}\n",
    )
    write(
        tmp_path / "teams.yaml",
        HEAD + "quotas:\n  - match: {user: alice}\n    profile: gold\n"
        "    set: {request_percentage: 50}\n",
    )
    state = load_desired([tmp_path])
    assert state.quotas[alice()] == {"producer_byte_rate": 10485760.0, "request_percentage": 50.0}


def test_desired_duplicate_profile_names_both_places(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", HEAD + "profiles:\n  gold: {request_percentage: 1}\n")
    b = write(tmp_path / "b.yaml", HEAD + "profiles:\n  gold: {request_percentage: 2}\n")
    assert problems([tmp_path]) == [
        f"{b}:4:3: duplicate profile 'gold': also declared at {a}:4:3; allowed: each profile "
        "name once across all files"
    ]


def test_desired_overlay_replaces_whole_entry(tmp_path: Path) -> None:
    base = write(
        tmp_path / "base/q.yaml",
        HEAD + "quotas:\n"
        "  - match: {user: alice}\n    set: {producer_byte_rate: 1KiB, request_percentage: 10}\n"
        "  - match: {user: bob}\n    set: {request_percentage: 10}\n",
    )
    over = write(
        tmp_path / "prod/q.yaml",
        OVERLAY + "quotas:\n"
        "  - match: {user: alice}\n    set: {consumer_byte_rate: 2KiB}\n"
        "  - match: {user: carol}\n    set: {request_percentage: 30}\n",
    )
    state = load_desired([tmp_path / "base", tmp_path / "prod"])
    assert state.quotas == {
        alice(): {"consumer_byte_rate": 2048.0},  # producer_byte_rate is gone: whole replace
        Entity.of({"user": "bob"}): {"request_percentage": 10.0},
        Entity.of({"user": "carol"}): {"request_percentage": 30.0},
    }
    assert state.sources[alice()] == SourceLocation(str(over), 4, 5)
    assert state.sources[Entity.of({"user": "bob"})] == SourceLocation(str(base), 6, 5)
    # Order of paths does not matter: overlays apply after all base files.
    assert load_desired([tmp_path / "prod", tmp_path / "base"]).quotas == state.quotas


def test_desired_duplicate_within_overlays_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path / "a.yaml",
        OVERLAY + "quotas:\n  - match: {user: alice}\n    set: {request_percentage: 1}\n",
    )
    write(
        tmp_path / "b.yaml",
        OVERLAY + "quotas:\n  - match: {user: alice}\n    set: {request_percentage: 1}\n",
    )
    assert "duplicate overlay entity {user=alice}" in problems([tmp_path])[0]


def test_desired_digest_is_canonical(tmp_path: Path) -> None:
    a = write(
        tmp_path / "a.yaml",
        HEAD + "quotas:\n  - match: {user: a, client-id: c}\n"
        "    set: {producer_byte_rate: 1KiB, request_percentage: 5}\n"
        "  - match: {user: b}\n    set: {request_percentage: 1}\n",
    )
    b = write(
        tmp_path / "b.yml",
        HEAD + "# same content, other order, units and spelling\nquotas:\n"
        "  - match: {user: b}\n    set: {request_percentage: 1.0}\n"
        "  - match: {client-id: c, user: a}\n"
        "    set: {request_percentage: 5, producer_byte_rate: 1024}\n",
    )
    da, db = load_desired([a]), load_desired([b])
    assert da.digest == db.digest and len(da.digest) == 64
    state = DesiredState(quotas={alice(): {"request_percentage": 2.0}}, sources={})
    assert state.digest != da.digest


def test_desired_large_values_keep_their_meaning(tmp_path: Path) -> None:
    f = write(
        tmp_path / "q.yaml",
        HEAD + "quotas:\n  - match: {user: alice}\n"
        "    set: {producer_byte_rate: 9223372036854775807, request_percentage: 1.0e+300}\n",
    )
    values = load_desired([f]).quotas[alice()]
    assert values["producer_byte_rate"] == 2.0**63  # the LONG max, as a double on the wire
    assert math.isclose(values["request_percentage"], 1e300)


def test_desired_utf16_file_is_read(tmp_path: Path) -> None:
    f = tmp_path / "q.yaml"
    f.write_bytes(
        (HEAD + "quotas:\n  - match: {user: zoë}\n    set: {request_percentage: 1}\n").encode(
            "utf-16"
        )
    )
    assert Entity.of({"user": "zoë"}) in load_desired([f]).quotas


def test_desired_demo_and_examples_are_valid() -> None:
    assert len(load_desired([ROOT / "quotas"]).quotas) >= 5
    examples = ROOT / "examples/desired"
    for cluster in ("prod", "staging"):
        state = load_desired([examples / "base", examples / "overlays" / cluster])
        assert Entity.of({"user": "<default>"}) in state.quotas  # the literal-name example
