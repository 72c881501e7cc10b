"""The desired-state JSON Schema (docs/kquota-desired.schema.json) agrees with `kquota
validate` on the corpus, read as editors read YAML: 1.2's core schema (:mod:`yaml12`).

Every file of tests/desired/{good,warn,bad} goes through both; so does every edge case of
:data:`EDGES`, one value at a time (numbers YAML 1.1 and 1.2 read differently, units). The
verdicts must agree except for the cases in :data:`CANNOT_EXPRESS`, each with the reason JSON
Schema cannot say it; that list is exact (a case that starts to agree must leave it).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from yaml12 import load_all

from kquota.desired import DesiredStateError, load_desired
from repo_root import ROOT

HERE = Path(__file__).parent
CORPUS = sorted(p for d in ("good", "warn", "bad") for p in (HERE / d).glob("*.yaml"))
VALIDATOR = jsonschema.Draft202012Validator(
    json.loads((ROOT / "docs" / "kquota-desired.schema.json").read_text(encoding="utf-8"))
)

CANNOT_EXPRESS: dict[str, str] = {
    # A mapping reaches JSON Schema with one value per key: a repeated key is gone by then.
    "bad/duplicate_key_block_style": "a repeated key (the YAML reader keeps one)",
    "bad/duplicate_key_in_entry": "a repeated key (the YAML reader keeps one)",
    "bad/duplicate_key_in_match": "a repeated key (the YAML reader keeps one)",
    "bad/duplicate_key_in_set": "a repeated key (the YAML reader keeps one)",
    "bad/duplicate_key_top_level": "a repeated key (the YAML reader keeps one)",
    # Relations between entries, or between an entry and the profiles.
    "bad/duplicate_entity_default": "an entity declared twice (entries compared by match)",
    "bad/duplicate_entity_literal_default": "an entity declared twice (entries compared)",
    "bad/duplicate_entity_same_file": "an entity declared twice (entries compared by match)",
    "bad/ip_two_spellings": "two spellings of one address (entries compared as addresses)",
    "bad/profile_unknown": "a profile name that no profile defines (a reference)",
    "bad/profile_wrong_entity_kind": "a profile's keys against the entity that uses it",
    # Arithmetic and encodings JSON Schema has no words for.
    "bad/name_too_long": "the limit is 32767 bytes of UTF-8; JSON Schema counts characters",
    "bad/value_too_large_with_unit": "a size times its unit above the LONG maximum",
    # The scalar's spelling, which a YAML 1.2 reader turns into a plain number.
    "bad/value_yaml11_exponent": "1e3 is a number in YAML 1.2, a string for validate (1.1)",
    "edge/octal": "010 is 10 in YAML 1.2; validate refuses the spelling (8 in YAML 1.1)",
    "edge/hex": "0x100000 is a number in both YAML versions; validate refuses the spelling",
    "edge/exponent": "1e6 is a number in YAML 1.2, a string for validate (1.1)",
    # Files: the schema checks one document; validate refuses a file of two.
    "bad/yaml_two_documents": "a second document in one file",
}

HEAD = "apiVersion: kquota/v1\nkind: ClientQuotas\nquotas:\n  - match: {user: alice}\n"
EDGES: dict[str, tuple[str, bool]] = {
    # name: (the entry's set, whether validate accepts it)
    "octal": ("{producer_byte_rate: 010}", False),
    "hex": ("{consumer_byte_rate: 0x100000}", False),
    "sexagesimal": ("{request_percentage: 1:30}", False),
    "binary": ("{producer_byte_rate: 0b1010}", False),
    "underscored": ("{producer_byte_rate: 1_048_576}", True),
    "octal_underscored": ("{request_percentage: +0_17}", False),
    "exponent": ("{producer_byte_rate: 1e6}", False),
    "unit": ("{producer_byte_rate: 1.5MiB}", True),
    "unit_fraction_of_a_byte": ("{producer_byte_rate: 1.5B}", False),
    "boolean_word": ("{request_percentage: yes}", False),
    "date": ("{request_percentage: 2026-01-01}", False),
}


def _schema_accepts(text: str) -> bool:
    try:
        documents = load_all(text)
    except yaml.YAMLError:
        return False  # an editor flags a YAML error too
    if len(documents) != 1:
        return len(documents) > 1 and all(VALIDATOR.is_valid(d) for d in documents)
    return VALIDATOR.is_valid(documents[0])


def _validate_accepts(path: Path) -> bool:
    try:
        load_desired([path])
    except DesiredStateError:
        return False
    return True


def _case(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("path", CORPUS, ids=_case)
def test_schema_and_validate_agree_on_the_corpus(path: Path) -> None:
    validate = _validate_accepts(path)
    schema = _schema_accepts(path.read_text(encoding="utf-8"))
    if _case(path) in CANNOT_EXPRESS:
        assert not validate and schema, f"{_case(path)} now agrees: take it off the list"
    else:
        assert schema == validate, f"{_case(path)}: validate {validate}, schema {schema}"


@pytest.mark.parametrize("name", sorted(EDGES))
def test_schema_and_validate_agree_value_by_value(name: str, tmp_path: Path) -> None:
    entry, accepted = EDGES[name]
    text = f"{HEAD}    set: {entry}\n"
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    assert _validate_accepts(path) == accepted, name
    if f"edge/{name}" in CANNOT_EXPRESS:
        assert not accepted and _schema_accepts(text), f"edge/{name} now agrees"
    else:
        assert _schema_accepts(text) == accepted, name


def test_the_list_of_what_json_schema_cannot_say_names_real_cases() -> None:
    known = {_case(p) for p in CORPUS} | {f"edge/{n}" for n in EDGES}
    assert set(CANNOT_EXPRESS) <= known
    assert len(CORPUS) >= 60


def test_yaml12_reads_as_editors_do() -> None:
    (doc,) = load_all("a: 010\nb: 0x10\nc: 1:30\nd: 1_000\ne: yes\nf: 0o17\ng: .inf\nh: ~\n")
    assert doc == {
        "a": 10, "b": 16, "c": "1:30", "d": "1_000",
        "e": "yes", "f": 15, "g": float("inf"), "h": None,
    }  # fmt: skip
