"""Compact JSON schemas for the MCP tools: an assistant pays for every byte of ``tools/list``.

The pydantic models stay the single source of the arguments (names, types, bounds, enums,
defaults) and of their validation; what a tool *publishes* is a compact rendering of them:

- input: each argument's JSON type (``["number", "string"]`` for quantities such as ``"7B"``),
  its bounds and enum, its non-null default, and the first sentence of its description; no
  titles, no regex patterns, no ``null`` branches (an argument left out is "not given");
- output: the result's top-level keys with their JSON types only; nested objects are
  ``object`` (the reply's structured content keeps what a program needs; ``detail: "full"``
  returns the nested detail).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel

__all__ = ["compact_input_schema", "compact_output_schema", "first_sentence"]

MAX_DESCRIPTION = 70
"""Characters of an argument's description the schema keeps."""
SELF_EXPLANATORY = frozenset({
    "gpu_count", "seq_len", "micro_batch", "zero", "tp", "pp", "sp", "ep", "recompute",
    "offload", "optimizer", "stack", "flash_attention", "precision", "family", "layers",
    "hidden", "heads", "lora_targets", "weights_bits", "detail", "kind", "query",
    "higher_is_better", "failure_budget", "distill_token_fraction", "shorter_run_fraction",
    "board_power_w", "grid_kg_co2_per_kwh", "plot", "top", "must_fit", "max_gpu_count",
    "baseline_params", "baseline_tokens", "pue", "metric_expected", "price_kind",
    "mfu_convention", "experts", "experts_per_token",
})
"""Arguments whose name, type and choices say what they are: no description in the schema
(the tool's description explains the layout knobs once)."""
_KEEP = ("enum",)
"""What of a value's constraints the schema keeps: its choices. Ranges are checked, and
reported by name, when the tool runs."""


def first_sentence(text: str | None) -> str | None:
    """The first sentence of ``text``, at most MAX_DESCRIPTION characters."""
    if not text:
        return None
    protected = text.replace("e.g. ", "e.g.\u00a0").replace("i.e. ", "i.e.\u00a0")
    cut = protected.split(". ")[0].split("; ")[0].rstrip(".").replace("\u00a0", " ")
    if len(cut) > MAX_DESCRIPTION:
        cut = cut[: MAX_DESCRIPTION - 1].rsplit(" ", 1)[0] + "…"
    return cut


def _types(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """A compact schema for one value: type(s), bounds, enum, array items."""
    if "$ref" in schema:
        return _types(defs[schema["$ref"].split("/")[-1]], defs)
    branches = [b for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]
    out: dict[str, Any] = {}
    kinds: list[str] = []
    for raw in branches:
        branch = defs[raw["$ref"].split("/")[-1]] if "$ref" in raw else raw
        kind = branch.get("type", "object" if "properties" in branch else None)
        if kind is None and "enum" in branch:
            kind = "string"
        if kind is not None and kind not in kinds:
            kinds.append(kind)
        if len(branches) == 1:
            out.update({k: branch[k] for k in _KEEP if k in branch})
        if kind == "array" and "items" in branch:
            out["items"] = _types(branch["items"], defs)
    if kinds:
        out["type"] = kinds[0] if len(kinds) == 1 else kinds
    return out


def compact_input_schema(model: type[BaseModel],
                         published: tuple[str, ...] | None = None,
                         undescribed: frozenset[str] = frozenset(),
                         optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The published input schema of an arguments model (module docstring). With
    ``published``, only those arguments are listed and the others are still accepted (they are
    described once, on the tool that owns them); ``undescribed`` arguments are listed without
    a description (another tool's schema describes them); ``optional`` ones are not required
    (the tool asks the user for them when they are missing)."""
    full = model.model_json_schema()
    defs = full.get("$defs", {})
    properties: dict[str, Any] = {}
    for name, prop in full.get("properties", {}).items():
        if published is not None and name not in published:
            continue
        entry = _types(prop, defs)
        default = prop.get("default")
        if default is not None:
            entry["default"] = default
        description = None if name in SELF_EXPLANATORY | undescribed else first_sentence(
            model.model_fields[name].description if name in model.model_fields
            else prop.get("description"))
        if description:
            entry["description"] = description
        properties[name] = entry
    schema: dict[str, Any] = {"type": "object", "properties": properties,
                              "additionalProperties": published is not None}
    required = [r for r in full.get("required", []) if r in properties and r not in optional]
    if required:
        schema["required"] = required
    return schema


def _json_kinds(annotation: Any) -> list[str]:
    """The JSON types of a Python annotation, in pydantic's order (``T | None`` adds null last);
    [] when it says nothing (``Any``)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _json_kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(annotation)
        kinds = [k for m in members if m is not type(None) for k in _json_kinds(m)]
        kinds = list(dict.fromkeys(kinds))
        return [*kinds, "null"] if type(None) in members and kinds else kinds
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return list(dict.fromkeys(_json_kinds(type(v))[0] for v in values))
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return ["array"]
    if origin is dict or annotation is dict:
        return ["object"]
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return ["object"]
        for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"),
                           (str, "string")):
            if issubclass(annotation, kind):
                return [name]
    return []


def compact_output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The published output schema of a result model: top-level keys and JSON types, read
    from the fields' annotations (a full JSON schema of a nested result costs tens of
    milliseconds per tool at start-up; ``tests/tools/test_context_budget.py`` checks it
    against a reading of the full JSON schema)."""
    hints = typing.get_type_hints(model)  # resolves forward references left in model_fields
    properties: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        kinds = _json_kinds(hints.get(name, info.annotation))
        properties[info.alias or name] = (
            {} if not kinds else {"type": kinds[0] if len(kinds) == 1 else kinds})
    return {"type": "object", "properties": properties}
