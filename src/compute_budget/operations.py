"""One table of operations, read by both doors: for each, the command and the tool that run it,
its one-line title, the spec it takes, the call, the reply, and whether it can draw a picture.

``cli.py`` and ``tools/`` keep only what belongs to their door: the CLI its flags, files and
exit statuses; the MCP server its questions, brief replies and published schemas. Everything
here is imported on first use, so the CLI builds only the models of the command it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import prompts, skill as sk
from .skill.errors import ComputeBudgetError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .prompts.plots import Picture

__all__ = ["OPERATIONS", "Operation", "Reply", "by_command", "by_tool", "reply_text"]


@dataclass(frozen=True)
class Reply:
    """How a door wants the reply: ``full`` every source and breakdown; ``assistant`` the
    closing question step 3 of the procedure asks, and arguments named as the tools take them
    (the MCP door); ``flags`` the CLI command's flag for each argument, which its reply names
    (:mod:`.prompts.naming`; None: flags spelled from the names)."""

    full: bool = False
    assistant: bool = False
    flags: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Operation:
    """One thing compute-budget does, as both doors expose it."""

    command: str | None
    """The CLI subcommand; None when only the MCP server offers it."""
    tool: str | None
    """The MCP tool; None when only the CLI offers it."""
    title: str
    """One line: the CLI's help and the tool's title."""
    spec: str
    """The public name in ``compute_budget.skill`` of the model the operation takes."""
    call: Callable[[Any], BaseModel]
    """spec → result."""
    reply: Callable[[Any, Reply], str]
    """(result, reply style) → markdown."""
    picture: Callable[[Any, Any], Picture] | None = None
    """(spec, result) → the picture's data; raises InputError when there is nothing to draw.
    None: the operation draws no picture."""

    @property
    def spec_model(self) -> type[BaseModel]:
        """The spec model (imported on first use)."""
        model: type[BaseModel] = getattr(sk, self.spec)
        return model


def _fit_picture(spec: Any, result: Any) -> Picture:
    from .prompts.plots import fit_picture_data

    if not isinstance(result, sk.ScalingFit):
        raise ComputeBudgetError("plot: a picture needs a fit of your small runs (give points)")
    return fit_picture_data(result, spec.points)


def _plan_picture(spec: Any, result: Any) -> Picture:
    from .prompts.plots import plan_picture_data

    return plan_picture_data(result, result.deadline_days, result.budget_usd)


def _estimate_reply(result: Any, reply: Reply) -> str:
    return prompts.render_estimate(result, closing=reply.assistant,
                                   detail="full" if reply.full else "short")


def _decision_reply(result: Any, reply: Reply) -> str:
    return prompts.render_decision(result, assistant=reply.assistant)


def _plan_reply(result: Any, reply: Reply) -> str:
    return prompts.render_plan(result, assistant=reply.assistant)


def _split_reply(result: Any, reply: Reply) -> str:
    return prompts.render_split(result, detail="full" if reply.full else "short")


def _catalog_reply(result: Any, reply: Reply) -> str:
    return prompts.render_accelerators(result.accelerators, show_sources=reply.full)


def _probe(spec: Any) -> Any:
    """Measure ``spec``'s model on this machine's device: the ``probe`` extra's torch runner
    (imported only here; without torch it raises a ProbeError naming the extra)."""
    from .probe import run_probe
    from .skill.model.source import hf_config_of

    spec = spec.checked()
    result = run_probe(
        hf_config_of(spec), name=spec.preset or spec.model_id or "config",
        seq_len=spec.resolved_seq_len, micro_batch=spec.micro_batch or 1,
        precision=spec.precision, recompute=spec.recompute, lora_rank=spec.lora_rank,
        steps=spec.steps, device=spec.device, attn_implementation=spec.attn_implementation)
    return sk.probe_report(spec, result)


def _plain(render: Callable[[Any], str]) -> Callable[[Any, Reply], str]:
    def reply(result: Any, _: Reply) -> str:
        return render(result)

    return reply


def _skill(name: str) -> Callable[[Any], Any]:
    """The skill function ``name``, looked up on first call."""
    def call(spec: Any) -> Any:
        return getattr(sk, name)(spec)

    call.__name__ = name
    return call


OPERATIONS: tuple[Operation, ...] = (
    Operation("estimate", "estimate_run_cost", "Estimate a training run's time and cost",
              "RunSpec", _skill("estimate_run"), _estimate_reply),
    Operation("decide", "render_verdict", "Go / marginal / no-go verdict on a run",
              "VerdictSpec", _skill("verdict_on"), _decision_reply),
    Operation("alternatives", "suggest_alternatives", "Price cheaper alternatives to a run",
              "AlternativesSpec", _skill("alternatives_for"),
              _plain(prompts.render_alternatives)),
    Operation("memory", "estimate_memory", "Memory per device and whether it fits",
              "MemorySpec", _skill("estimate_memory"), _plain(prompts.render_memory)),
    Operation("split", "split_budget", "Split a compute budget between model size and data",
              "BudgetTableSpec", _skill("budget_table"), _split_reply),
    Operation("compare", "compare_candidates", "Rank candidate runs by gain per dollar",
              "CompareSpec", _skill("compare_candidates"), _plain(prompts.render_comparison)),
    Operation("fit", "fit_scaling_law", "Predict a run's loss and gain from small runs",
              "FitSpec", _skill("predict"), _plain(prompts.render_fit), _fit_picture),
    Operation("optimal", "compute_optimal", "Compute-optimal params and tokens for a budget",
              "OptimalSpec", _skill("optimal"), _plain(prompts.render_optimal)),
    Operation("plan", "plan_run", "Cheapest devices and count to meet a deadline",
              "PlanSpec", _skill("plan_run"), _plan_reply, _plan_picture),
    Operation("gpus", "list_accelerators", "List accelerators: peaks, memory, prices, sources",
              "CatalogQuery", _skill("find_accelerators"), _catalog_reply),
    Operation("params", None, "Exact parameter counts of an architecture, by component",
              "ModelSource", _skill("report_of"), _plain(prompts.render_params)),
    Operation("probe", None, "Measure the model on this device: memory, step time, MFU "
              "(needs the probe extra)", "ProbeSpec", _probe, _plain(prompts.render_probe)),
)
"""Every operation, in the order of the procedure, then the planning ones."""


def by_command(command: str) -> Operation:
    """The operation a CLI subcommand runs."""
    return next(op for op in OPERATIONS if op.command == command)


def by_tool(tool: str) -> Operation:
    """The operation an MCP tool runs."""
    return next(op for op in OPERATIONS if op.tool == tool)


def reply_text(operation: Operation, result: Any, reply: Reply) -> str:
    """The operation's markdown reply, other operations and arguments named as the door knows
    them: the MCP tool and the argument for an assistant, the command and the flag for the
    CLI."""
    def name_of(command: str) -> str:
        other = by_command(command)
        return f"`{other.tool}`" if reply.assistant else f"`compute-budget {other.command}`"

    with prompts.naming(None if reply.assistant else reply.flags or {}):
        text = operation.reply(result, reply)
    return prompts.name_tools(text, name_of)
