"""Turn an operation of the table (:mod:`compute_budget.operations`) into an MCP tool.

Why not the SDK's ``@server.tool()`` on a plain function: the argument schema must come from the
``skill`` specs (one source for descriptions, units and ranges), every bad argument must come
back as one clear ``isError`` message naming the argument (unknown arguments included, which the
SDK would silently drop), and missing inputs must be asked of the user through elicitation where
the client supports it. So each tool here

- takes as its arguments model the operation's spec itself, composed with the door's options
  (``detail``, ``plot``): every validator of the spec comes along, and a call is validated once;
- publishes that model's compact JSON schema (:mod:`.schemas`), with the fields it may ask for
  left optional, and its result model's top-level keys as the output schema;
- lets every argument through the SDK's own argument model, then validates it against the
  arguments model, reporting errors with :func:`describe_error`;
- declares each :class:`Question` as an ``Annotated[..., Resolve(...)]`` parameter, so the SDK
  asks the user in whichever way the connection supports, and only when the client declared
  form elicitation and nothing else is wrong; a missing field it may ask for is the spec's own
  "missing" error, and otherwise the reply lists what is missing and what it means.
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
from anyio.lowlevel import RunVar
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from ..operations import Operation, Reply, reply_text
from ..prompts.mcp_texts import (
    duplicate_keys_text,
    missing_inputs_text,
    one_device_text,
    tool_description,
)
from ..skill import ComputeBudgetError, describe_error
from ..skill.errors import not_finite_cause
from .duplicate_keys import MARKER
from .relay import RELAYED, relayed
from .renamed import nested_arguments, renamed_arguments, with_renamed
from .schemas import compact_input_schema, compact_output_schema, portable_arguments

__all__ = ["READ_ONLY", "Question", "ToolSpec", "arguments_model", "build_tool"]

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
    """Arguments the answer fills."""
    form: type[BaseModel]
    """Elicitation form: a flat model with exactly ``fields``, primitive types only."""
    message: str
    """What the user is asked."""
    required: tuple[str, ...] | None = None
    """Fields whose absence makes the tool ask (default: all of ``fields``); the others have
    defaults and are asked only alongside."""
    alternatives: tuple[tuple[str, ...], ...] = ()
    """Other sets of arguments that answer the question when all of them are given."""

    def missing(self, given: Mapping[str, Any]) -> tuple[str, ...]:
        """What is still missing, by the way of answering that ``given`` is closest to."""
        options = [self.required or self.fields, *self.alternatives]
        best = max(options, key=lambda fields: sum(f in given for f in fields))
        return tuple(f for f in best if f not in given)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the operation it runs and what belongs to the MCP door."""

    operation: Operation
    arguments: type[BaseModel]
    """The operation's spec composed with the door's options (:func:`arguments_model`)."""
    output: type[BaseModel]
    questions: tuple[Question, ...] = ()
    published: tuple[str, ...] | None = None
    """Arguments listed in the published schema (None: all); the others are accepted too."""
    brief: Any = None
    """What the structured content leaves out unless ``detail`` is ``full`` (a pydantic
    ``model_dump`` exclude): nested copies a program rarely needs."""
    trim: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    """A last pass over the brief structured content (e.g. drop empty keys of list items)."""
    undescribed: frozenset[str] = frozenset()
    """Arguments listed without a description: another tool's schema describes them."""

    @property
    def name(self) -> str:
        assert self.operation.tool is not None
        return self.operation.tool

    @property
    def askable(self) -> frozenset[str]:
        """The fields this tool may ask the user for."""
        return frozenset(f for q in self.questions for f in q.fields)


def arguments_model(operation: Operation, *options: type[BaseModel]) -> type[BaseModel]:
    """The tool's arguments: the operation's spec itself, with the door's ``options``."""
    name = "".join(part.title() for part in (operation.tool or "").split("_")) + "Arguments"
    model: type[BaseModel] = create_model(
        name, __base__=(operation.spec_model, *options), __module__=__name__)
    return model


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
    """Arguments actually given, as the models take them: a JSON null counts as absent, and
    the portable schema's forms become the models' (:func:`.schemas.portable_arguments`)."""
    return portable_arguments(values)


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


def _only_askable_missing(spec: ToolSpec, given: Mapping[str, Any]) -> bool:
    """Whether ``given`` is valid but for fields the tool may ask for."""
    try:
        spec.arguments.model_validate(given)
    except ValidationError as exc:
        return all(e.get("type") == "missing" and str(e["loc"][0]) in spec.askable
                   for e in exc.errors(include_url=False))
    return True


def _keyword_parameters(names: Any) -> list[inspect.Parameter]:
    return [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any)
            for n in names]


def _resolver(spec: ToolSpec, question: Question) -> Callable[..., Any]:
    """Ask ``question`` only when its fields are missing, the rest is valid, and the client
    can show a form; otherwise answer None and let the tool body report what is missing."""

    def ask(**kwargs: Any) -> Any:
        ctx = kwargs.pop(_CONTEXT)
        given = _given(kwargs)
        if not question.missing(given) or not _supports_form_elicitation(ctx):
            return None
        if not _only_askable_missing(spec, given):
            return None
        missing = tuple(f for f in question.fields if f not in given)
        return Elicit(question.message, _form_for(question, missing))

    parameters = _keyword_parameters(spec.arguments.model_fields)
    parameters.append(
        inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=Context))
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


HEAVY_TOOLS = frozenset({"fit_scaling_law", "plan_run", "compare_candidates",
                         "suggest_alternatives"})
"""Tools whose call can take a CPU-second: run in a worker thread, HEAVY_AT_ONCE at a time
across every client, so that a burst of them queues instead of starving the event loop, and
another client's cheap call (an estimate) still answers within a few times its own time (it
shares the interpreter lock with one worker, not with many: ``benchmarks/fair_share.py``)."""
HEAVY_AT_ONCE = 1
_LIMITER: RunVar[anyio.CapacityLimiter] = RunVar("compute_budget_heavy_calls")


def _heavy_limiter() -> anyio.CapacityLimiter:
    """The limiter of heavy calls of the running event loop (made on first use)."""
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = anyio.CapacityLimiter(HEAVY_AT_ONCE)
        _LIMITER.set(limiter)
        return limiter


async def _compute(name: str, given: Mapping[str, Any], call: Callable[[_T], _R],
                   argument: _T) -> _R:
    """``call(argument)`` for tool ``name``: a heavy tool in a worker thread under the shared
    limiter; any other off the loop only when it may read a file (:func:`_off_loop`)."""
    if name in HEAVY_TOOLS:
        return await anyio.to_thread.run_sync(call, argument, limiter=_heavy_limiter())
    return await _off_loop(given, call, argument)


async def _off_loop(given: Mapping[str, Any], call: Callable[[_T], _R], argument: _T) -> _R:
    """``call(argument)``; with a ``config`` or a ``model`` given, in a worker thread:
    validating a spec resolves its architecture, which may read a file or fetch one from the
    Hugging Face Hub, and the event loop must never wait on a disk or the network."""
    if not {"config", "model", "model_id"} & given.keys():
        return call(argument)
    return await anyio.to_thread.run_sync(call, argument)


def _merge_answers(given: dict[str, Any], answers: list[Any]) -> bool:
    """Add the user's answers to ``given``; whether any question was declined."""
    declined = False
    for outcome in answers:
        if isinstance(outcome, AcceptedElicitation):
            if outcome.data is not None:  # None: nothing was asked
                for f in type(outcome.data).model_fields:
                    given.setdefault(f, getattr(outcome.data, f))
        elif outcome is not None:  # declined or cancelled
            declined = True
    return declined


def _failure(spec: ToolSpec, exc: BaseException, given: Mapping[str, Any]) -> ToolError:
    text = describe_error(exc, catalog_hint=CATALOG_HINT, skip=spec.askable)
    if not_finite_cause(exc) is not None:
        text += f" (arguments given: {', '.join(sorted(given))})"
    return ToolError(text)


async def _validate(spec: ToolSpec, given: dict[str, Any], declined: bool) -> BaseModel:
    """The arguments, validated once; every invalid one and what is missing in one reply (an
    argument sent under its command-line name is named, not asked for again)."""
    renamed = renamed_arguments(spec.operation.command, spec.arguments, given)
    nested = nested_arguments(spec.arguments, given)
    held = {*renamed.values(), *(k for inner in nested.values() for k in inner)}
    missing = [(f, spec.arguments.model_fields[f].description or f)
               for q in spec.questions for f in q.missing(given) if f not in held]
    try:
        arguments = await _off_loop(given, spec.arguments.model_validate, given)
    except ValidationError as exc:
        text = with_renamed(spec.name, renamed, given,
                            describe_error(exc, catalog_hint=CATALOG_HINT, skip=spec.askable),
                            nested)
        if isinstance(given.get("gpu"), list) and "gpu" in spec.arguments.model_fields:
            text = "\n".join((text, one_device_text(spec.name)))
        if missing:
            text = "\n".join(filter(None, (text, missing_inputs_text(spec.name, missing,
                                                                     declined))))
        raise ToolError(text) from None
    if missing:
        raise ToolError(missing_inputs_text(spec.name, missing, declined))
    return arguments


async def _picture(spec: ToolSpec, arguments: BaseModel, result: BaseModel) -> ImageContent:
    from ..prompts.plots import draw_png

    assert spec.operation.picture is not None
    data = spec.operation.picture(arguments, result)
    png = await anyio.to_thread.run_sync(draw_png, data)
    return ImageContent(type="image", mime_type="image/png",
                        data=base64.b64encode(png).decode("ascii"))


BRIEF_DIGITS = 6
"""Significant digits of a fraction in the brief structured content: 0.18512012528460414 costs
an assistant 19 bytes, 0.18512 seven, and no reply quotes more (``detail: "full"`` keeps all).
A number of a million or more keeps its whole units (a budget of $1,906,335 must not come back
as $1,906,340, the cost it is $1.01 below; a parameter count stays exact), up to WHOLE_BELOW,
past which (FLOPs) six digits say all a reply does."""
WHOLE_BELOW = 1e15


def _rounded(data: Any) -> Any:
    """``data`` with every float to :data:`BRIEF_DIGITS` significant digits, or to whole units
    where that would drop some."""
    if isinstance(data, float):
        if not math.isfinite(data) or data == 0:
            return data
        if abs(data) >= WHOLE_BELOW:
            return float(f"{data:.{BRIEF_DIGITS}g}")
        return round(data, max(0, BRIEF_DIGITS - 1 - math.floor(math.log10(abs(data)))))
    if isinstance(data, dict):
        return {k: _rounded(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_rounded(v) for v in data]
    return data


def _handler(spec: ToolSpec) -> Callable[..., Any]:
    operation = spec.operation

    async def handle(**kwargs: Any) -> CallToolResult:
        kwargs.pop(_CONTEXT, None)
        repeated = kwargs.pop(MARKER, None)
        if repeated:
            raise ToolError(duplicate_keys_text([str(p) for p in repeated]))
        answers = [kwargs.pop(q.key, None) for q in spec.questions]
        given = _given(kwargs)
        arguments = await _validate(spec, given, _merge_answers(given, answers))
        full = getattr(arguments, "detail", None) == "full"
        try:
            result = await _compute(spec.name, given, operation.call, arguments)
            markdown = reply_text(operation, result, Reply(full=full, assistant=True))
            content: list[TextContent | ImageContent] = [TextContent(type="text",
                                                                     text=markdown)]
            if operation.picture is not None and getattr(arguments, "plot", None):
                content.append(await _picture(spec, arguments, result))
        except (ComputeBudgetError, ValidationError) as exc:
            raise _failure(spec, exc, given) from None
        structured = result.model_dump(mode="json", exclude=None if full else spec.brief)
        if not full:
            structured = _rounded(structured if spec.trim is None else spec.trim(structured))
        structured = relayed(spec.name, result, structured, full, arguments)
        return CallToolResult(content=content, structured_content=structured)

    parameters = _keyword_parameters(spec.arguments.model_fields)
    for q in spec.questions:
        parameters.append(inspect.Parameter(
            q.key, inspect.Parameter.KEYWORD_ONLY, annotation=_answer(q, _resolver(spec, q))))
    parameters.append(
        inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=Context))
    returns = CallToolResult  # the output schema is ours (compact), set in build_tool
    handle.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    handle.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    handle.__name__ = spec.name
    return handle


def build_tool(spec: ToolSpec) -> Tool:
    """The SDK ``Tool`` for ``spec`` (see the module docstring)."""
    tool = Tool.from_function(_handler(spec), name=spec.name, title=spec.operation.title,
                              description=tool_description(spec.name), annotations=READ_ONLY)
    # Validation is ours (one message format, unknown arguments reported); the SDK lets all
    # arguments through. The SDK reads these fields live.
    anything: dict[str, Any] = {n: (Any, None) for n in spec.arguments.model_fields}
    tool.fn_metadata.arg_model = create_model(
        f"{spec.name}_passthrough", __base__=_LetThrough, **anything)
    # Published compactly (an assistant pays for every byte); validated by our own models.
    tool.parameters = compact_input_schema(spec.arguments, spec.published, spec.undescribed,
                                           optional=spec.askable)
    tool.fn_metadata.output_schema = compact_output_schema(spec.name in RELAYED)
    tool.fn_metadata.output_model = None
    return tool
