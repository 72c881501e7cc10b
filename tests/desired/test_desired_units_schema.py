"""Byte-size units, and the JSON Schema generated from the models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kquota.desired.models import DesiredFile
from kquota.desired.schema import json_schema
from kquota.units import UNITS, UnitError, format_byte_size, parse_byte_size
from repo_root import ROOT


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("10MiB", 10 * 1024**2),
        ("500KB", 500_000),
        ("500kB", 500_000),
        ("1.5MiB", 1_572_864),
        ("0.1MB", 100_000),
        ("1048576B", 1_048_576),
        ("2GiB/s", 2 * 1024**3),
        ("10 MB", 10_000_000),
        ("1TB", 10**12),
    ],
)
def test_desired_units_examples(text: str, size: int) -> None:
    assert parse_byte_size(text) == size


@pytest.mark.parametrize("text", ["10mb", "10 MiBs", "MiB", "1.MiB", "-1MiB", "1e3KB", "1.0001KiB"])
def test_desired_units_refused(text: str) -> None:
    with pytest.raises(UnitError):
        parse_byte_size(text)


@given(st.integers(1, 2**50), st.sampled_from(sorted(UNITS)))
def test_desired_units_whole_multiples(n: int, unit: str) -> None:
    assert parse_byte_size(f"{n}{unit}") == n * UNITS[unit]


@given(st.integers(1, 2**62))
def test_desired_units_format_round_trips(size: int) -> None:
    assert parse_byte_size(format_byte_size(size)) == size


@given(st.integers(0, 10**6), st.integers(1, 9999), st.sampled_from(["KiB", "MiB", "KB", "MB"]))
def test_desired_units_fractions_are_exact(whole: int, frac: int, unit: str) -> None:
    text = f"{whole}.{frac:04d}{unit}"
    exact = (whole * 10_000 + frac) * UNITS[unit]
    if exact % 10_000:
        with pytest.raises(UnitError, match="not a whole number of bytes"):
            parse_byte_size(text)
    else:
        assert parse_byte_size(text) == exact // 10_000


def test_desired_schema_file_is_current() -> None:
    committed = json.loads((ROOT / "docs/kquota-desired.schema.json").read_text())
    assert committed == json_schema(), (
        "regenerate: kquota validate --print-schema > docs/kquota-desired.schema.json"
    )


def test_desired_schema_offers_no_null_and_knows_every_key() -> None:
    text = json.dumps(json_schema())
    assert '"null"' not in text
    quota_set = json_schema()["$defs"]["QuotaSet"]
    assert quota_set["additionalProperties"] is False
    assert set(quota_set["properties"]) == {
        "producer_byte_rate",
        "consumer_byte_rate",
        "request_percentage",
        "controller_mutation_rate",
        "connection_creation_rate",
    }


def _yaml_files() -> list[Path]:
    roots = [ROOT / "quotas", ROOT / "examples/desired", Path(__file__).parent / "good"]
    return sorted(p for r in roots for p in r.rglob("*.yaml"))


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_desired_valid_files_satisfy_the_models(path: Path) -> None:
    # The models are the schema's source; files the loader accepts must satisfy them too.
    DesiredFile.model_validate(yaml.safe_load(path.read_text()))


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_desired_valid_files_satisfy_the_json_schema(path: Path) -> None:
    import jsonschema

    jsonschema.Draft202012Validator(json_schema()).validate(yaml.safe_load(path.read_text()))
