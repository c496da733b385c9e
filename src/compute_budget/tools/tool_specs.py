"""What the MCP door adds to each operation of the table: the questions it may ask, the brief
structured content, which arguments its schema lists and describes.

The arguments of every tool are the operation's spec (:mod:`compute_budget.operations`) with the
door's options (``detail``, ``plot``); nothing of the spec is copied, so every validator comes
along and a call is validated once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..operations import by_tool
from ..prompts.mcp_texts import question_text
from ..skill import (
    AlternativesOptions,
    AlternativesReport,
    BudgetTable,
    BudgetTableSpec,
    Catalog,
    Comparison,
    Decision,
    DecisionInputs,
    GainFromPoints,
    MemoryEstimate,
    OptimalSplit,
    PlanReport,
    RunEstimate,
    RunSpec,
    ScalingFit,
    list_accelerators,
)
from .toolkit import Question, ToolSpec, arguments_model

__all__ = ["GAIN", "HARDWARE", "TOOL_NAMES", "tool_specs"]


class ReplyOptions(BaseModel):
    """How much every tool returns."""

    model_config = ConfigDict(extra="forbid")

    detail: Literal["short", "full"] | None = Field(
        default=None,
        description="full: the long reply with every source quoted and the nested detail in "
                    "the structured content. Default short.",
    )


class PlotOption(BaseModel):
    """Whether a tool adds a picture."""

    model_config = ConfigDict(extra="forbid")

    plot: bool | None = Field(default=None, description="true: add the picture as a PNG image.")


# --- what the tools ask the user for ------------------------------------------------------

_GPU_KEYS = tuple(a.key for a in list_accelerators()
                  if a.peak_tflops.get(a.default_precision) is not None)
_literal: Any = Literal
_hardware_fields: dict[str, Any] = {
    "gpu": (_literal[_GPU_KEYS], Field(description=RunSpec.model_fields["gpu"].description)),
    "gpu_count": (int, Field(ge=1, description=RunSpec.model_fields["gpu_count"].description)),
}
HardwareForm: type[BaseModel] = create_model("HardwareForm", **_hardware_fields)
"""What the user is asked for when the GPU type or count is missing (catalog keys to choose)."""

_gain_fields: dict[str, Any] = {
    name: (float, Field(ge=0 if name == "gain_uncertainty" else None,
                        description=DecisionInputs.model_fields[name].description))
    for name in ("predicted_gain", "gain_uncertainty")
} | {"baseline_to_beat": (float, Field(
    default=0.0, description=DecisionInputs.model_fields["baseline_to_beat"].description))}
GainForm: type[BaseModel] = create_model("GainForm", **_gain_fields)
"""What the user is asked for in step 3 when the gain, its uncertainty or the baseline is
missing."""

HARDWARE = Question("hardware_answer", ("gpu", "gpu_count"), HardwareForm,
                    question_text("hardware"))
GAIN = Question("gain_answer", ("predicted_gain", "gain_uncertainty", "baseline_to_beat"),
                GainForm,
                question_text("gain"), required=("predicted_gain", "gain_uncertainty"),
                alternatives=(("metric_now", "metric_expected", "gain_uncertainty"),
                              ("points", "baseline_loss")))


# --- how much each tool returns by default ------------------------------------------------

def _drop_empty_items(key: str) -> Any:
    """Drop the null keys of each item of the list under ``key``, and of the objects directly
    in it (rows say only what applies to them: a device's peaks at the precisions it has; a
    top-level unknown stays null)."""
    def kept(item: dict[str, Any]) -> dict[str, Any]:
        return {k: kept(v) if isinstance(v, dict) else v for k, v in item.items()
                if v is not None and v != []}

    def trim(data: dict[str, Any]) -> dict[str, Any]:
        data[key] = [kept(item) for item in data.get(key, [])]
        return data
    return trim


DESCRIBED_ON_ESTIMATE = frozenset(info.alias or name
                                  for name, info in RunSpec.model_fields.items())
"""Run arguments: described once, in estimate_run_cost's schema; other tools list them bare."""
DESCRIBED_ON_VERDICT = frozenset(DecisionInputs.model_fields)
"""The gain and money arguments: described once, in render_verdict's schema."""
DESCRIBED_ON_FIT = frozenset(GainFromPoints.model_fields)
"""Small-run points and the baseline loss: described once, in fit_scaling_law's schema."""
CORE_RUN = ("params", "preset", "model", "active_params", "tokens", "gpu", "gpu_count", "kind",
            "usd_per_gpu_hour", "lora_rank", "weights_bits", "seq_len")
"""The run arguments render_verdict and suggest_alternatives list; they take the rest of
estimate_run_cost's too (described once, there). What changes a run's cost most is listed: a
strict client sends only listed keys, and without the user's price a verdict weighed the
catalog's ($2.20 an H100-hour became $3.99, and a GO under a $60k budget a NO-GO); without
active_params an MoE was priced at its total size."""
MEMORY_BRIEF: dict[str, Any] = {"shape": True, "optimizer": {"holds", "source"},
                                "node_devices": True, "layout": {"tried", "slowdown"},
                                "offload_cost": {"link_bytes", "cpu_bytes", "link_gbs",
                                                 "host_platform", "host_memory_origin"},
                                "host_ram": {"bytes_per_device", "source", "usable_fraction",
                                             "devices_per_node"},
                                "peer_link": {"flops_per_byte", "source", "as_of"}}
"""The memory result without the shape, the optimizer's texts and the search's working."""
ESTIMATE_BRIEF: dict[str, Any] = {
    "param_breakdown": True, "flops_breakdown": True,
    "peak_source": True, "price": {"reference"}, "config_notes": True, "device_unit": True,
    "layout_cost": {"recompute", "tensor_parallel", "pipeline", "zero", "in_prior", "applied",
                    "total_range", "smallest_batch_tokens", "batch_origin"},
    "mfu_used": {"prior": {"runs", "source", "basis", "trend", "observed"},
                 "own_runs": {"runs"}},
    "memory": MEMORY_BRIEF | dict.fromkeys(
        ("optimizer", "peer_link", "offload_cost", "host_ram", "logits_bytes_per_element",
         "logits_bytes", "usable_fraction", "activations_in_flight", "zero3_gathered_bytes"),
        True),  # estimate_memory gives them (an MoE on PCIe cards went over 6 KB)
    "energy": {"board_power_w": {"source", "as_of"}, "pue": {"source", "as_of"},
               "grid_kg_co2_per_kwh": {"source", "as_of"}, "accelerator": True,
               "accelerator_key": True, "gpu_count": True, "wall_hours": True,
               "wall_hours_range": True},
}
"""The estimate without the breakdowns, the long source quotes, the memory's detail, the
device unit (the relay's price line names it) and the energy's copies of the estimate's own
device, count and hours."""
CATALOG_BRIEF: dict[str, Any] = {"notes": True, "accelerators": {"__all__": {
    "spec_source": True, "spec_as_of": True, "prices": True, "aliases": True,
    "board_power_w": True, "board_power_source": True, "generation": True, "vendor": True,
    "device_unit": True,
    "memory_bandwidth_tbs": True, "usable_memory_source": True,
    "default_price": {"offer", "source", "default", "family", "kind", "host_ram_gib"}}}}
"""The catalog without its sources and every price quote but the default."""


def _spec(tool: str, output: type[BaseModel], *options: type[BaseModel],
          **door: Any) -> ToolSpec:
    operation = by_tool(tool)
    return ToolSpec(operation, arguments_model(operation, *options, ReplyOptions), output,
                    **door)


def tool_specs() -> list[ToolSpec]:
    """The tools, in the order of the procedure, then the planning tools."""
    return [
        _spec("estimate_run_cost", RunEstimate, questions=(HARDWARE,), brief=ESTIMATE_BRIEF),
        _spec("render_verdict", Decision, questions=(HARDWARE, GAIN),
              brief={"findings": {"__all__": {"numbers"}}, "gain_fit": {"curve"}},
              published=(*CORE_RUN, *DecisionInputs.model_fields,
                         *GainFromPoints.model_fields, "probe", "detail"),
              undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_FIT),
        _spec("suggest_alternatives", AlternativesReport, questions=(HARDWARE,),
              published=(*CORE_RUN, *AlternativesOptions.model_fields, "detail"),
              undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_VERDICT,
              brief={"original": ESTIMATE_BRIEF | {"memory": True, "defaults_used": True,
                                                   "layout_cost": True, "flop_counts": True},
                     "alternatives": {"__all__": {
                         "estimate": True,
                         "detail": {"price_quote": {"source", "offer", "family"}}}}},
              trim=_drop_empty_items("alternatives")),
        _spec("estimate_memory", MemoryEstimate, brief=MEMORY_BRIEF,
              undescribed=DESCRIBED_ON_ESTIMATE,
              published=("params", "config", "preset", "gpu", "gpu_count", "lora_rank",
                         "weights_bits", "seq_len", "micro_batch", "zero", "tp", "pp",
                         "recompute", "offload", "host_ram_gib", "optimizer", "detail")),
        _spec("split_budget", BudgetTable,
              brief={"mfu_used": {"prior": True, "own_runs": {"runs"}}, "peak_source": True,
                     "price": {"reference"}},
              published=(*(f for f in BudgetTableSpec.model_fields if f != "utilization"),
                         "detail"),
              undescribed=frozenset({"calibration"})),
        _spec("list_accelerators", Catalog, brief=CATALOG_BRIEF,
              trim=_drop_empty_items("accelerators")),
        _spec("compare_candidates", Comparison,
              brief={"candidates": {"__all__": {"estimate", "decision"}}},
              undescribed=DESCRIBED_ON_VERDICT),
        _spec("fit_scaling_law", ScalingFit, PlotOption, brief={"curve": True}),
        _spec("compute_optimal", OptimalSplit,
              undescribed=frozenset({"active_params", "preset", "config", "model"})),
        _spec("plan_run", PlanReport, PlotOption,
              published=("params", "preset", "model", "active_params", "tokens", "kind",
                         "lora_rank", "weights_bits", "seq_len", "deadline_days", "budget_usd",
                         "gpus", "available", "max_gpu_count", "max_batch_tokens", "probe",
                         "plot", "detail"),
              undescribed=DESCRIBED_ON_ESTIMATE | DESCRIBED_ON_VERDICT,
              brief={"frontier": True, "plans": {"__all__": {"estimate"}},
                     "fastest": {"__all__": {"estimate"}}, "cheapest_modelled": {"estimate"},
                     "binding": {"__all__": {"plan"}}}),
    ]


TOOL_NAMES = ("estimate_run_cost", "render_verdict", "suggest_alternatives", "estimate_memory",
              "split_budget", "list_accelerators", "compare_candidates", "fit_scaling_law",
              "compute_optimal", "plan_run")
"""The tools, in the order the server lists them."""
