"""The JSON Schema of desired-state files, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from typing import Any

from kquota.desired.models import DesiredFile


def json_schema() -> dict[str, Any]:
    """json_schema is the schema generated from the models (``kquota validate --print-schema``)."""
    schema = _without_null(DesiredFile.model_json_schema(by_alias=True))
    assert isinstance(schema, dict)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _without_null(node: Any) -> Any:
    # Optional fields are Python-optional (absent), never YAML null: the loader refuses null,
    # so the schema must not offer it either.
    if isinstance(node, list):
        return [_without_null(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _without_null(v) for k, v in node.items() if not (k == "default" and v is None)}
    any_of = out.get("anyOf")
    if isinstance(any_of, list):
        kept = [a for a in any_of if a != {"type": "null"}]
        if len(kept) == 1:
            del out["anyOf"]
            out = {**kept[0], **out}
        else:
            out["anyOf"] = kept
    return out
