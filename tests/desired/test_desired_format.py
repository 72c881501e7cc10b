"""The loader's field names (kquota.desired.format) are the pydantic models' own."""

from __future__ import annotations

import subprocess
import sys

from kquota.desired import format as fmt
from kquota.desired import models


def test_the_loader_reads_exactly_the_fields_the_schema_models_declare() -> None:
    assert models.field_names(models.DesiredFile) == fmt.TOP_FIELDS
    assert models.field_names(models.Entry) == fmt.ENTRY_FIELDS
    assert models.field_names(models.LiteralName) == fmt.LITERAL_FIELDS
    assert models.DesiredFile.model_fields["kind"].annotation.__args__ == fmt.KINDS  # type: ignore[union-attr]
    assert models.DesiredFile.model_fields["api_version"].annotation.__args__ == (fmt.API_VERSION,)  # type: ignore[union-attr]


def test_loading_and_planning_do_not_import_pydantic() -> None:
    """pydantic costs about 0.4 s of start-up; a plan or apply of YAML files never needs it."""
    code = (
        "import sys, kquota.desired.loader, kquota.cli.apply, kquota.cli.plan, "
        "kquota.cli.describe; print('pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
