"""The desired-state file format as pydantic models: the source of the JSON Schema.

These models describe the format for editors and for the generated
``docs/kquota-desired.schema.json``. Files are not validated through them: the loader walks
YAML nodes itself so that every problem carries ``file:line:column`` (see
:mod:`kquota.desired.document`), with the field names of :mod:`kquota.desired.format`, which
a test holds equal to these models' (so loading never imports pydantic).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from kquota.desired.format import (  # noqa: F401 -- re-exported: the models' own names
    API_VERSION,
    DEFAULT_NAME,
    KIND_BASE,
    KIND_OVERLAY,
    KINDS,
)
from kquota.quotakeys import INT_MAX, LONG_MAX, QUOTA_KEYS, ValueType
from kquota.units import UNITS_HELP

_SIZE_PATTERN = r"^[0-9]+(\.[0-9]+)? ?(B|KB|kB|MB|GB|TB|KiB|MiB|GiB|TiB)(/s)?$"


def _value_type(key: str) -> Any:
    spec = QUOTA_KEYS[key]
    if spec.value_type is ValueType.LONG:
        size = Annotated[str, Field(pattern=_SIZE_PATTERN, description=UNITS_HELP)]
        return Annotated[int, Field(ge=1, le=LONG_MAX)] | size
    if spec.value_type is ValueType.INT:
        return Annotated[int, Field(ge=1, le=INT_MAX)]
    return Annotated[float, Field(gt=0, allow_inf_nan=False)]


_STRICT = ConfigDict(extra="forbid", populate_by_name=True)

QuotaSet: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "QuotaSet",
    __config__=ConfigDict(extra="forbid", json_schema_extra={"minProperties": 1}),
    __doc__="Quota keys and values. Byte rates take units (10MiB); ip entities take only "
    "connection_creation_rate, the others only the user/client-id keys.",
    **{key: (_value_type(key) | None, None) for key in QUOTA_KEYS},
)


class LiteralName(BaseModel):
    """A name taken literally: ``{name: "<default>"}`` is the entity named ``<default>``.

    ``verbatim: true`` declares a user or client-id name exactly as a cluster has it, control
    characters, surrounding whitespace and invisible characters included, without warnings.
    """

    model_config = _STRICT
    name: str = Field(min_length=1)
    verbatim: bool = Field(
        default=False,
        description="Take the name exactly as written, control characters, surrounding "
        "whitespace and invisible characters included (user and client-id names only).",
    )


EntityName = Annotated[
    str | LiteralName,
    Field(
        description='"<default>" is the default entity; {name: "<default>"} is a name '
        "that literally reads <default>."
    ),
]
NonEmptyName = Annotated[str, Field(min_length=1)]


class Match(BaseModel):
    """Match names one entity: user and/or client-id, or ip alone (an IP literal)."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_extra={"minProperties": 1}
    )
    user: NonEmptyName | LiteralName | None = None
    client_id: NonEmptyName | LiteralName | None = Field(default=None, alias="client-id")
    ip: NonEmptyName | LiteralName | None = Field(
        default=None, description="an IPv4 or IPv6 literal"
    )


class Entry(BaseModel):
    """Entry sets quotas for one entity: a profile's values, then ``set`` on top."""

    model_config = _STRICT
    match: Match
    profile: NonEmptyName | None = None
    set: QuotaSet | None = None  # type: ignore[valid-type]


class DesiredFile(BaseModel):
    """One desired-state file. ClientQuotasOverlay entries replace base entries whole."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, title="kquota desired state")
    api_version: Literal["kquota/v1"] = Field(alias="apiVersion")
    kind: Literal["ClientQuotas", "ClientQuotasOverlay"]
    profiles: dict[NonEmptyName, QuotaSet] | None = None  # type: ignore[valid-type]
    quotas: list[Entry] | None = None


def field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """field_names lists a model's fields as written in YAML (aliases)."""
    return tuple(f.alias or name for name, f in model.model_fields.items())
