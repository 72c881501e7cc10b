"""The JSON Schema of desired-state files, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from typing import Any

from kquota.desired.models import _SIZE_PATTERN, DesiredFile


def json_schema() -> dict[str, Any]:
    """json_schema is the schema generated from the models (``kquota validate --print-schema``)."""
    schema = _without_null(DesiredFile.model_json_schema(by_alias=True))
    assert isinstance(schema, dict)
    _refine(schema["$defs"])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


# What `kquota validate` refuses that the models' types alone do not say, written as JSON
# Schema so that an editor refuses it too (tests/desired/test_desired_schema_corpus.py holds
# the schema and validate to the same verdicts, and lists what JSON Schema cannot express).
_NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
_OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}(\\.{_OCTET}){{3}}"
_H = "[0-9a-fA-F]{1,4}"
_IPV6 = (
    f"(({_H}:){{7}}{_H}|({_H}:){{1,7}}:|({_H}:){{1,6}}:{_H}|({_H}:){{1,5}}(:{_H}){{1,2}}"
    f"|({_H}:){{1,4}}(:{_H}){{1,3}}|({_H}:){{1,3}}(:{_H}){{1,4}}|({_H}:){{1,2}}(:{_H}){{1,5}}"
    f"|{_H}:(:{_H}){{1,6}}|:((:{_H}){{1,7}}|:)|::([fF]{{4}}(:0{{1,4}})?:)?{_IPV4}"
    f"|({_H}:){{1,4}}:{_IPV4})"
)
_IP = f"^({_IPV4}|{_IPV6}|<default>)$"
_MAX_NAME = 32767  # characters; the protocol's limit is in UTF-8 bytes (see the test's list)
_YAML11_UNDERSCORED = "^[1-9][0-9]*(_[0-9]+)+$"
"""A YAML 1.1 integer with underscores (1_048_576): validate reads it as a number, YAML 1.2
editors as a string, which the schema must then accept too."""
_IP_KEYS = ["connection_creation_rate"]
_WHOLE_BYTES_SIZE = r"^([0-9]+ ?B|[0-9]+(\.[0-9]+)? ?(KB|kB|MB|GB|TB|KiB|MiB|GiB|TiB))(/s)?$"
"""The size pattern without fractions of a byte (1.5B): validate refuses those."""


def _refine(defs: dict[str, Any]) -> None:
    name = {"type": "string", "minLength": 1, "maxLength": _MAX_NAME, "pattern": _NO_CONTROL}
    literal = defs["LiteralName"]
    literal["properties"]["name"]["maxLength"] = _MAX_NAME
    # verbatim: true takes control characters as they are; otherwise they are refused.
    literal["if"] = {"properties": {"verbatim": {"const": True}}, "required": ["verbatim"]}
    literal["else"] = {"properties": {"name": {"pattern": _NO_CONTROL}}}
    match = defs["Match"]
    for key in ("user", "client-id"):
        match["properties"][key]["anyOf"][0] = dict(name)
    match["properties"]["ip"]["anyOf"][0] = {"type": "string", "pattern": _IP}
    match["dependentSchemas"] = {
        "ip": {"not": {"anyOf": [{"required": ["user"]}, {"required": ["client-id"]}]}}
    }
    entry = defs["Entry"]
    entry["anyOf"] = [{"required": ["set"]}, {"required": ["profile"]}]
    entry["if"] = {"properties": {"match": {"required": ["ip"]}}}
    entry["then"] = {"properties": {"set": {"propertyNames": {"enum": _IP_KEYS}}}}
    entry["else"] = {"properties": {"set": {"propertyNames": {"not": {"enum": _IP_KEYS}}}}}
    underscored = {"type": "string", "pattern": _YAML11_UNDERSCORED}
    for rule in defs["QuotaSet"]["properties"].values():
        if "anyOf" in rule:
            for alternative in rule["anyOf"]:
                if alternative.get("pattern") == _SIZE_PATTERN:
                    alternative["pattern"] = _WHOLE_BYTES_SIZE
            rule["anyOf"].append(underscored)
            continue
        title = rule.pop("title", None)
        base = dict(rule)
        rule.clear()
        rule["anyOf"] = [base, underscored]
        if title is not None:
            rule["title"] = title


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
