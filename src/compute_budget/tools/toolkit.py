"""Turn a pydantic arguments model and a ``skill`` call into an MCP tool.

Why not the SDK's ``@server.tool()`` on a plain function: the argument schema must come from the
``skill`` models (one source for descriptions, units and ranges), every bad argument must come
back as one clear ``isError`` message naming the argument (unknown arguments included, which the
SDK would silently drop), and missing inputs must be asked of the user through elicitation where
the client supports it. So each tool here

- publishes its arguments model's compact JSON schema as the input (``additionalProperties``
  false, or true when it lists only some arguments and takes the rest too), and its result
  model's top-level keys as the output schema;
- lets every argument through the SDK's own argument model, then validates it against the
  arguments model itself, reporting errors with :func:`describe_error`;
- declares each :class:`Question` as an ``Annotated[..., Resolve(...)]`` parameter, so the SDK
  asks the user in whichever way the connection supports (a server-to-client elicitation on
  handshake-era connections, an ``InputRequiredResult`` on 2026-07-28 ones), and only when the
  client declared form elicitation; otherwise the reply lists what is missing and what it means.
"""

from __future__ import annotations

import base64
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import (
    AcceptedElicitation,
    Context,
    Elicit,
    ElicitationResult,
    Resolve,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.fields import FieldInfo

from ..prompts.mcp_texts import missing_inputs_text
from ..skill import ComputeBudgetError, describe_error
from .schemas import compact_input_schema, compact_output_schema

__all__ = ["READ_ONLY", "Question", "ToolSpec", "build_tool", "merge_arguments"]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
"""Every compute-budget tool only computes: nothing is written, nothing outside is reached."""

_CONTEXT = "ctx"
_T = TypeVar("_T")
_R = TypeVar("_R")
CATALOG_HINT = "list_accelerators lists the catalog"


@dataclass(frozen=True)
class Question:
    """Inputs a tool asks the user for when they are missing from the call."""

    key: str
    """Parameter name of the answer (also the elicitation's key on the wire)."""
    fields: tuple[str, ...]
    """Arguments the answer fills; each must be optional in the arguments model."""
    form: type[BaseModel]
    """Elicitation form: a flat model with exactly ``fields``, primitive types only."""
    message: str
    """What the user is asked."""
    required: tuple[str, ...] | None = None
    """Fields whose absence makes the tool ask (default: all of ``fields``); the others have
    defaults and are asked only alongside."""
    alternatives: tuple[tuple[str, ...], ...] = ()
    """Other sets of arguments that answer the question when all of them are given."""

    def answered(self, given: Mapping[str, Any]) -> bool:
        """Whether ``given`` already answers the question."""
        return not self.missing(given)

    def missing(self, given: Mapping[str, Any]) -> tuple[str, ...]:
        """What is still missing, by the way of answering that ``given`` is closest to."""
        options = [self.required or self.fields, *self.alternatives]
        best = max(options, key=lambda fields: sum(f in given for f in fields))
        return tuple(f for f in best if f not in given)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its names and texts, its models, and the call that produces its result."""

    name: str
    title: str
    description: str
    arguments: type[BaseModel]
    output: type[BaseModel]
    run: Callable[[BaseModel], tuple[BaseModel, str]]
    """Validated arguments → (result model, markdown reply)."""
    questions: tuple[Question, ...] = ()
    published: tuple[str, ...] | None = None
    """Arguments listed in the published schema (None: all); the others are accepted too."""
    brief: Any = None
    """What the structured content leaves out unless ``detail`` is ``full`` (a pydantic
    ``model_dump`` exclude): nested copies a program rarely needs."""
    trim: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """A last pass over the brief structured content (e.g. drop empty keys of list items)."""
    undescribed: frozenset[str] = frozenset()
    """Arguments listed without a description: ``estimate_run_cost`` describes them."""
    picture: Callable[[BaseModel, BaseModel], bytes | None] | None = None
    """(arguments, result) → a PNG sent as an image content item beside the markdown, or None
    (the tool's ``plot`` argument asks for it)."""


def merge_arguments(
    name: str, *models: type[BaseModel], optional: frozenset[str] = frozenset()
) -> type[BaseModel]:
    """One arguments model from the fields of ``models`` (later ones win), ``extra="forbid"``.

    Fields named in ``optional`` become ``T | None`` defaulting to None: the tool asks for them.
    Descriptions, constraints and parsers are the models' own, so the schema has one source.
    """
    fields: dict[str, Any] = {}
    for model in models:
        for field_name, info in model.model_fields.items():
            if field_name in optional:
                inner: Any = info.annotation
                if info.metadata:
                    inner = Annotated[(inner, *info.metadata)]
                fields[field_name] = (
                    inner | None,
                    FieldInfo(default=None, description=info.description),
                )
            else:
                fields[field_name] = (info.annotation, info)
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


class _LetThrough(ArgModelBase):
    """The SDK-side argument model: accepts anything, keeps unknown keys for our validation."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        values = super().model_dump_one_level()
        values.update(self.model_extra or {})
        return values


def _supports_form_elicitation(ctx: Context[Any, Any]) -> bool:
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _given(values: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments actually given: a JSON null counts as absent."""
    return {k: v for k, v in values.items() if v is not None}


@cache
def _form_for(question: Question, fields: tuple[str, ...]) -> type[BaseModel]:
    """The question's form reduced to the fields still missing (nobody is asked twice)."""
    if fields == question.fields:
        return question.form
    chosen: dict[str, Any] = {
        f: (question.form.model_fields[f].annotation, question.form.model_fields[f])
        for f in fields
    }
    return create_model(f"{question.form.__name__}_{'_'.join(fields)}", **chosen)


def _resolver(spec: ToolSpec, question: Question) -> Callable[..., Any]:
    """Ask ``question`` only when its fields are missing, the rest is valid, and the client
    can show a form; otherwise answer None and let the tool body report what is missing."""

    def ask(**kwargs: Any) -> Any:
        ctx = kwargs.pop(_CONTEXT)
        given = _given(kwargs)
        if question.answered(given):
            return None
        try:
            spec.arguments.model_validate(given)
        except ValidationError:
            return None
        if not _supports_form_elicitation(ctx):
            return None
        missing = tuple(f for f in question.fields if f not in given)
        return Elicit(question.message, _form_for(question, missing))

    parameters = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any)
        for n in spec.arguments.model_fields
    ]
    parameters.append(
        inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    )
    ask.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    ask.__annotations__ = {p.name: p.annotation for p in parameters}
    ask.__qualname__ = f"{spec.name}.ask_{question.key}"
    ask.__name__ = f"ask_{question.key}"
    return ask


def _answer(question: Question, resolver: Callable[..., Any]) -> Any:
    """``Annotated[ElicitationResult[form], Resolve(resolver)]``, built at run time."""
    annotated: Any = Annotated
    outcome: Any = ElicitationResult
    return annotated[outcome[question.form], Resolve(resolver)]


def _finite(value: Any) -> bool:
    """Whether every number in a dumped result is finite (never inf or nan in a reply)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return True


async def _off_loop(given: Mapping[str, Any], call: Callable[[_T], _R], argument: _T) -> _R:
    """``call(argument)``; with a ``config`` or a ``model`` given, in a worker thread:
    validating a spec resolves its architecture, which may read a file or fetch one from the
    Hugging Face Hub, and the event loop must never wait on a disk or the network. (The SDK
    already runs the synchronous resolvers that ask for missing inputs in worker threads.)"""
    if not {"config", "model", "model_id"} & given.keys():
        return call(argument)
    return await anyio.to_thread.run_sync(call, argument)


def _handler(spec: ToolSpec) -> Callable[..., Any]:
    async def handle(**kwargs: Any) -> CallToolResult:
        kwargs.pop(_CONTEXT, None)
        answers = [kwargs.pop(q.key, None) for q in spec.questions]
        given = _given(kwargs)
        declined = False
        for outcome in answers:
            if isinstance(outcome, AcceptedElicitation):
                if outcome.data is not None:  # None: nothing was asked
                    for f in type(outcome.data).model_fields:
                        given.setdefault(f, getattr(outcome.data, f))
            elif outcome is not None:  # declined or cancelled
                declined = True
        missing = [
            (f, spec.arguments.model_fields[f].description or f)
            for q in spec.questions for f in q.missing(given)
        ]
        try:
            arguments = await _off_loop(given, spec.arguments.model_validate, given)
        except ValidationError as exc:
            # every invalid argument, and what is still missing, in one reply
            text = describe_error(exc, catalog_hint=CATALOG_HINT)
            if missing:
                text += "\n" + missing_inputs_text(spec.name, missing, declined)
            raise ToolError(text) from None
        if missing:
            raise ToolError(missing_inputs_text(spec.name, missing, declined))
        try:
            result, markdown = await _off_loop(given, spec.run, arguments)
        except (ComputeBudgetError, ValidationError) as exc:
            raise ToolError(describe_error(exc, catalog_hint=CATALOG_HINT)) from None
        if not _finite(result.model_dump(mode="python")):
            raise ToolError(
                "the result is out of range for these arguments ("
                + ", ".join(sorted(given)) + "): bring the extreme ones closer to real runs")
        full = getattr(arguments, "detail", None) == "full"
        structured = result.model_dump(mode="json", exclude=None if full else spec.brief)
        if not full and spec.trim is not None:
            structured = spec.trim(structured)
        content: list[TextContent | ImageContent] = [TextContent(type="text", text=markdown)]
        if spec.picture is not None:
            try:
                png = await anyio.to_thread.run_sync(spec.picture, arguments, result)
            except ComputeBudgetError as exc:
                raise ToolError(describe_error(exc, catalog_hint=CATALOG_HINT)) from None
            if png is not None:
                content.append(ImageContent(type="image", mime_type="image/png",
                                            data=base64.b64encode(png).decode("ascii")))
        return CallToolResult(content=content, structured_content=structured)

    parameters = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any)
        for n in spec.arguments.model_fields
    ]
    for q in spec.questions:
        parameters.append(inspect.Parameter(
            q.key, inspect.Parameter.KEYWORD_ONLY, annotation=_answer(q, _resolver(spec, q)),
        ))
    parameters.append(
        inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    )
    returns = CallToolResult  # the output schema is ours (compact), set in build_tool
    handle.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    handle.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    handle.__name__ = spec.name
    return handle


def build_tool(spec: ToolSpec) -> Tool:
    """The SDK ``Tool`` for ``spec`` (see the module docstring)."""
    for q in spec.questions:
        for f in q.fields:
            if spec.arguments.model_fields[f].is_required():
                raise ValueError(f"{spec.name}: question field {f!r} must be optional")
    tool = Tool.from_function(
        _handler(spec),
        name=spec.name,
        title=spec.title,
        description=spec.description,
        annotations=READ_ONLY,
    )
    # Validation is ours (one message format, unknown arguments reported); the SDK lets all
    # arguments through. The SDK reads these fields live.
    anything: dict[str, Any] = {n: (Any, None) for n in spec.arguments.model_fields}
    tool.fn_metadata.arg_model = create_model(
        f"{spec.name}_passthrough", __base__=_LetThrough, **anything
    )
    # Published compactly (an assistant pays for every byte); validated by our own models.
    tool.parameters = compact_input_schema(spec.arguments, spec.published, spec.undescribed)
    tool.fn_metadata.output_schema = compact_output_schema(spec.output)
    tool.fn_metadata.output_model = None
    return tool
