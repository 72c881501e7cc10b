"""The desired-state format's names, without pydantic: what the loader needs to read a file.

The pydantic models (:mod:`kquota.desired.models`) stay the source of the JSON Schema; these
names are theirs, written out so a plan or apply of a canonical file never imports pydantic
(about 0.4 s of start-up). tests/desired/test_desired_format.py holds them equal to the
models' fields.
"""

from __future__ import annotations

API_VERSION = "kquota/v1"
KIND_BASE = "ClientQuotas"
KIND_OVERLAY = "ClientQuotasOverlay"
KINDS = (KIND_BASE, KIND_OVERLAY)
DEFAULT_NAME = "<default>"

TOP_FIELDS = ("apiVersion", "kind", "profiles", "quotas")
"""Fields of a desired-state file (models.DesiredFile), as written in YAML."""
ENTRY_FIELDS = ("match", "profile", "set")
"""Fields of one entry of ``quotas`` (models.Entry)."""
LITERAL_FIELDS = ("name", "verbatim")
"""Fields of a literal name, ``{name: ..., verbatim: ...}`` (models.LiteralName)."""
