"""The JSON schemas the MCP tools publish, in one portable dialect (issue 19).

The pydantic models stay the single source of the arguments and of their validation; what a tool
*publishes* is a rendering of them that every client library converts without loss (Gemini's
OpenAPI subset, OpenAI's and Anthropic's strict modes, agent frameworks):

- one ``type`` per property: a number that may be written with a suffix ("7B", "$2.10") is a
  ``string`` whose description gives the forms; ``config`` is a string (a path or the JSON
  object); a value or null is ``anyOf`` of the one type and ``null``;
- no ``additionalProperties`` (the server refuses unknown names itself), no ``default`` (the
  description says it), string enums only (``weights_bits``: "4", "8", "16");
- every object declares its properties: ``available`` is a list of ``{gpu, count}``, ``points``,
  ``candidates`` and ``calibration`` lists of declared objects;
- every optional argument is "value or null", null meaning not given, so a strict client that
  makes every argument required stays valid (mutually exclusive inputs are resolved by null);
- every argument has one short line (``templates/mcp/arguments.md.j2``), inside the non-null
  branch of its ``anyOf``: google-genai's MCP conversion keeps only that branch, so a
  description beside ``anyOf`` (pydantic's place for it) is lost for Gemini (tried 2026-12-06:
  every optional argument of estimate_run_cost lost its line; tests/tools/test_clients.py). A
  check that looks for ``description`` at the property's top level counts these as undescribed;
  they are not, and both places at once would cost about 6 KB of the 28 KB budget;
- the output: an object (its keys are in each reply; a relayed tool's says where its
  sentences are).

:func:`portable_arguments` turns the new forms back into the models' before validation; the old
forms (a number, an object for ``config`` or ``available``, an integer ``weights_bits``) stay
valid. :func:`portability_problems` checks a schema against the dialect.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from ..prompts.argument_texts import argument_line

__all__ = ["compact_input_schema", "compact_output_schema", "portability_problems",
           "portable_arguments"]

LISTED_KEYS: dict[str, tuple[str, ...]] = {
    "candidates": ("name", "params", "active_params", "preset", "tokens", "gpu", "gpu_count",
                   "usd_per_gpu_hour", "predicted_gain", "gain_uncertainty"),
}
"""Of a list argument whose objects take a whole run spec, the keys the schema lists (the others
are accepted too; a strict client sends only these, so the price is among them)."""
LISTED_ONCE = frozenset({"calibration"})
"""List arguments listed only by a tool that lists its whole spec and describes them
(estimate_run_cost); the others accept them too: a list of declared objects costs a kilobyte a
tool."""
MAPPINGS: dict[str, tuple[str, str]] = {"available": ("gpu", "count")}
"""Mapping arguments published as a list of ``{key, value}`` objects: their two names (the
model takes the list itself)."""
JSON_TEXT = frozenset({"probe"})
"""Object arguments published as a string holding their JSON (a file another program wrote,
passed on whole; the server parses it): the object's own keys would cost more than the budget."""
_NULL = {"type": "null"}


def _resolve(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    return defs[schema["$ref"].split("/")[-1]] if "$ref" in schema else schema


def _branches(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The non-null alternatives of a value, references resolved."""
    schema = _resolve(schema, defs)
    return [_resolve(b, defs) for b in schema.get("anyOf", [schema]) if b.get("type") != "null"]


def _value(schema: Mapping[str, Any], defs: Mapping[str, Any], name: str,
           brief: bool = False) -> dict[str, Any]:
    """The portable schema of one non-null value of argument ``name`` (no description)."""
    if name in JSON_TEXT:
        return {"type": "string"}
    branches = _branches(schema, defs)
    for branch in branches:
        if branch.get("type") == "array":
            return {"type": "array", "items": _value(branch.get("items", {}), defs, name, brief)}
    for branch in branches:
        if "properties" in branch:
            return _object(branch, defs, name, brief)
    if name in MAPPINGS:
        key, count = MAPPINGS[name]
        return {"type": "array", "items": {"type": "object", "properties": {
            key: {"type": "string", "description": argument_line(key, name)},
            count: {"type": "integer", "description": argument_line(count, name)}},
            "required": [key, count]}}
    kinds = {b.get("type", "string") for b in branches}
    choices = [v for b in branches for v in b.get("enum", ())]
    if len(kinds) != 1:
        kinds = {"string"}  # a number or its written form ("7B"), a path or a JSON object
    value: dict[str, Any] = {"type": "string" if choices else kinds.pop()}
    if choices:
        value["enum"] = [str(c) for c in choices]
    return value


def _property(schema: Mapping[str, Any], defs: Mapping[str, Any], name: str,
              parent: str | None, nullable: bool, brief: bool = False) -> dict[str, Any]:
    """One property: its value, described, as "value or null" when it may be left out. A key
    of a list argument's objects has its own line (``parent.name``) if any: a shared name
    (params, gpu) is described as an argument; a ``brief`` list argument's keys go without
    (another tool gives them)."""
    value = _value(schema, defs, name, brief)
    description = (argument_line(name, parent) if parent is None
                   else None if brief else argument_line(name, parent, qualified_only=True))
    if description:
        value["description"] = description
    return {"anyOf": [value, _NULL]} if nullable else value


def _object(schema: Mapping[str, Any], defs: Mapping[str, Any], parent: str,
            brief: bool) -> dict[str, Any]:
    """A list argument's object: its declared keys (:data:`LISTED_KEYS`), the optional ones
    nullable."""
    keys = LISTED_KEYS.get(parent, tuple(schema["properties"]))
    required = [r for r in schema.get("required", []) if r in keys]
    properties = {k: _property(schema["properties"][k], defs, k, parent, k not in required,
                               brief) for k in keys}
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def compact_input_schema(model: type[BaseModel],
                         published: tuple[str, ...] | None = None,
                         undescribed: frozenset[str] = frozenset(),
                         optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The published input schema of an arguments model (module docstring). With
    ``published``, only those arguments are listed and the others are still accepted;
    ``optional`` ones are not required (the tool asks the user for them when they are
    missing). Every argument has its line; the keys of the objects of an ``undescribed`` list
    argument go without theirs (the tool that owns the argument gives them), and one of
    :data:`LISTED_ONCE` is listed only when every argument is (``published`` None)."""
    full = model.model_json_schema()
    defs = full.get("$defs", {})
    names = [n for n in full.get("properties", {}) if (published is None or n in published)
             and not (n in LISTED_ONCE and (published is not None or n in undescribed))]
    required = [r for r in full.get("required", []) if r in names and r not in optional]
    properties = {n: _property(full["properties"][n], defs, n, None, n not in required,
                               n in undescribed) for n in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def compact_output_schema(relayed: bool = False) -> dict[str, Any]:
    """The published output schema of every tool: an object. Its keys are the result model's
    (the contract: ``tests/test_contracts.py``; README names the main ones), read in the
    structured content each reply carries. They were named in the schema's description until
    2026-12-08 (3.9 KB of ``tools/list``); the bytes now list the run arguments a strict client
    would otherwise never send to render_verdict, suggest_alternatives and plan_run
    (``active_params``: an MoE plan was priced at its total size, 5× too dear). A ``relayed``
    tool's says where its sentences are, for clients that give a model the structured content
    alone."""
    if relayed:
        return {"type": "object", "description": "relay: what to tell the user"}
    return {"type": "object"}


# --- the arguments a portable schema sends, as the models take them ------------------------

INTEGER_CHOICES = frozenset({"weights_bits"})
"""Arguments whose choices are integers, published as strings ("4", "8", "16")."""


def _portable_value(name: str, value: Any) -> Any:
    if name in INTEGER_CHOICES and isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if name == "config" and isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except ValueError:
            return value  # the config's own validation names what is wrong
    if isinstance(value, list):
        return [portable_arguments(v) if isinstance(v, Mapping) else v for v in value]
    return value


def portable_arguments(given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` as the arguments models take it: null keys dropped (not given), at every level
    of a list argument's objects too; a ``config`` string holding a JSON object parsed; a
    ``weights_bits`` string an integer. An ``available`` list of ``{gpu, count}`` is passed on:
    the plan's spec takes it and refuses a type named twice, which a mapping would lose."""
    return {k: _portable_value(k, v) for k, v in given.items() if v is not None}


# --- the dialect, checked ------------------------------------------------------------------

_FORBIDDEN = ("additionalProperties", "default", "oneOf", "allOf", "$ref", "$defs",
              "patternProperties", "const")


def _nodes(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema of ``schema`` with its path."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from _nodes(sub, f"{path}.{name}")
    if "items" in schema:
        yield from _nodes(schema["items"], f"{path}[]")
    for i, sub in enumerate(schema.get("anyOf", [])):
        yield from _nodes(sub, f"{path}|{i}")


def _node_problems(path: str, node: dict[str, Any], typed: bool) -> Iterator[str]:
    yield from (f"{path}: has {word}" for word in _FORBIDDEN if word in node)
    kind = node.get("type")
    if "anyOf" in node:
        rest = [b for b in node["anyOf"] if b != _NULL]
        if len(node["anyOf"]) != 2 or len(rest) != 1 or "type" in node:
            yield f"{path}: anyOf is not one type or null"
    elif isinstance(kind, list):
        yield f"{path}: type is an array"
    elif kind is None and (typed or node):
        yield f"{path}: no type"
    if kind == "object" and not node.get("properties") and (typed or path != "$"):
        yield f"{path}: object without declared properties"  # an output's root names its keys
    if kind == "array" and typed and "items" not in node:
        yield f"{path}: array without items"
    if any(not isinstance(v, str) for v in node.get("enum", ())):
        yield f"{path}: enum of non-strings"
    if "enum" in node and kind != "string":
        yield f"{path}: enum on a {kind}"
    yield from (f"{path}: required {r} is not a property" for r in node.get("required", ())
                if r not in node.get("properties", {}))


def portability_problems(schema: dict[str, Any], *, output: bool = False) -> list[str]:
    """What keeps ``schema`` out of the portable dialect (module docstring); [] when nothing.
    An input schema also needs a description on every argument and null accepted by every
    property that is not required; an output schema may leave a value untyped (any JSON), and
    its root may be an object that names its keys in its description."""
    problems: list[str] = []
    if schema.get("type") != "object":
        problems.append("$: the root is not an object")
    for path, node in _nodes(schema, "$"):
        problems.extend(_node_problems(path, node, typed=not output))
        if output or node.get("type") != "object":
            continue
        required = set(node.get("required", ()))
        for name, prop in node.get("properties", {}).items():
            inner = next((b for b in prop.get("anyOf", []) if b != _NULL), prop)
            if path == "$" and not inner.get("description"):
                problems.append(f"{path}.{name}: no description")
            if name not in required and "anyOf" not in prop:
                problems.append(f"{path}.{name}: optional but not nullable")
    return problems
