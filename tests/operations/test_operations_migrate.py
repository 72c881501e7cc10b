"""import_desired, the operation behind ``kquota import``, as a program calls it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kquota.desired.loader import load_desired
from kquota.operations.migrate import SOURCES, ImportRefused, import_desired

SAMPLES = Path(__file__).parent.parent / "migrate" / "samples"


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_the_text_reads_back_as_the_entities_it_counts(source: str, tmp_path: Path) -> None:
    imported = import_desired(source, sorted((SAMPLES / source).iterdir()))
    out = tmp_path / "imported.yaml"
    out.write_text(imported.text)
    assert len(load_desired([out]).quotas) == imported.entities > 0
    assert all("skipped" in w.message or "not imported" in w.message for w in imported.warnings)


def test_refusals_are_raised_together_with_the_notes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: kafka.jikkou.io/v1\nkind: KafkaClientQuota\nspec:\n  type: NOPE\n"
        "---\napiVersion: v1\nkind: ConfigMap\n"
    )
    with pytest.raises(ImportRefused) as e:
        import_desired("jikkou", [bad])
    assert [p.line for p in e.value.problems] == [4]
    assert [w.line for w in e.value.warnings] == [6]
