"""The ``compute-budget`` command line: the same models and templates as the MCP server.

Each subcommand turns its flags into a ``skill`` input model, calls one ``skill`` function and
prints the rendered markdown, or the result model as JSON with ``--json``. Bad input prints one
message naming the flag, the value and what is allowed, and exits with status 2. This module
must not import ``mcp``: the CLI has to start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from . import __version__
from .prompts import (
    render_accelerators,
    render_alternatives,
    render_decision,
    render_estimate,
    render_memory,
    render_params,
    render_presets,
    render_split,
)
from .skill import (
    ComputeBudgetError,
    InputError,
    MemorySpec,
    ModelSource,
    RunSpec,
    SplitSpec,
    budget_split,
    decision_summary,
    describe_error,
    estimate_memory,
    estimate_run,
    get_preset,
    list_accelerators,
    list_presets,
    param_report,
    parse_quantity,
    suggest_alternatives,
)

__all__ = ["main"]

EXIT_USAGE = 2

# Model field → the flag a CLI user typed, so error messages name what they know.
FLAG_NAMES: dict[str, str] = {
    "params": "--params",
    "tokens": "--tokens",
    "gpu": "--gpu",
    "gpu_count": "--gpus",
    "mfu": "--mfu",
    "usd_per_gpu_hour": "--price",
    "active_params": "--active-params",
    "precision": "--precision",
    "peak_tflops": "--peak-tflops",
    "family": "--family",
    "failure_budget": "--failure-budget",
    "zero": "--zero",
    "tp": "--tp",
    "pp": "--pp",
    "sp": "--sp",
    "optimizer": "--optimizer",
    "trainable_params": "--trainable-params",
    "seq_len": "--seq-len",
    "micro_batch": "--micro-batch",
    "recompute": "--recompute",
    "layers": "--layers",
    "hidden": "--hidden",
    "heads": "--heads",
    "config": "--config",
    "preset": "--preset",
    "achieved_tflops": "--achieved-tflops",
    "predicted_gain": "--gain",
    "gain_uncertainty": "--uncertainty",
    "baseline_to_beat": "--baseline",
    "usd_per_unit_gain": "--value-per-unit",
    "budget_usd": "--budget-usd",
    "budget_flops": "--budget",
    "ratio": "--ratio",
    "flops_per_sec": "--flops-per-sec",
    "utilization": "--utilization",
    "teacher_params": "--teacher-params",
}


COMMAND_FLAGS: dict[str, dict[str, str]] = {
    "split": {"params": "--sizes", "usd_per_gpu_hour": "--price"},
}
"""Where a subcommand's flag for a field differs from the common one."""


class UsageError(Exception):
    """Raised instead of argparse's own exit, so every bad input is reported the same way."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}")


def _given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named flags that were actually given (None means: use the model's default)."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def _emit(args: argparse.Namespace, payload: BaseModel | list[Any], markdown: str) -> None:
    if args.json:
        data = (payload.model_dump(mode="json") if isinstance(payload, BaseModel)
                else [p.model_dump(mode="json") if isinstance(p, BaseModel) else p
                      for p in payload])
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(markdown)


# --- run spec flags, shared by estimate, decide and alternatives ------------------------------

RUN_FIELDS = ("params", "tokens", "gpu", "gpu_count", "mfu", "usd_per_gpu_hour", "active_params",
              "precision", "peak_tflops", "family", "failure_budget", "config", "preset",
              "seq_len", "recompute", "achieved_tflops", "micro_batch", "tp", "pp", "sp", "zero")


def _add_model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", metavar="N",
                   help="total parameters, e.g. 7B, 350M, 7e9 (MoE: total across experts); "
                        "not needed with --config or --preset")
    p.add_argument("--config", metavar="PATH",
                   help="a local Hugging Face config.json: exact parameters, shape and FLOPs")
    p.add_argument("--preset", metavar="NAME",
                   help="a named architecture instead of a config (`compute-budget params "
                        "--list` shows them)")


def _add_layout_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seq-len", dest="seq_len", metavar="S",
                   help="training sequence length in tokens (default 4096)")
    p.add_argument("--micro-batch", dest="micro_batch", metavar="B",
                   help="micro-batch size in sequences per device (default 1)")
    p.add_argument("--tp", metavar="T", help="tensor-parallel degree (default 1)")
    p.add_argument("--pp", metavar="P", help="pipeline-parallel degree (default 1)")
    p.add_argument("--sp", action="store_const", const=True,
                   help="sequence parallelism (with --tp > 1)")
    p.add_argument("--recompute", choices=["none", "selective", "full"],
                   help="activation recomputation (default none)")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    _add_model_flags(p)
    _add_layout_flags(p)
    p.add_argument("--achieved-tflops", dest="achieved_tflops", metavar="TF",
                   help="measured hardware TFLOP/s per device (recomputation counted, as "
                        "--recompute says); converted to MFU")
    p.add_argument("--zero", metavar="0-3",
                   help="ZeRO stage for the memory check (default: the lowest that fits)")
    p.add_argument("--tokens", required=True, metavar="T",
                   help="training tokens, e.g. 100B, 1.5T")
    p.add_argument("--gpu", required=True, metavar="NAME",
                   help="accelerator, e.g. h100, a100-80gb, tpu-v5p (see `compute-budget gpus`)")
    p.add_argument("--gpus", dest="gpu_count", required=True, metavar="K",
                   help="number of devices")
    p.add_argument("--mfu", metavar="F",
                   help="model FLOPs utilisation in (0, 1] (default: prior for the family)")
    p.add_argument("--price", dest="usd_per_gpu_hour", metavar="USD",
                   help="US dollars per device-hour, e.g. 2.10 or '$2.10' (default: catalog)")
    p.add_argument("--active-params", dest="active_params", metavar="N",
                   help="parameters active per token, for mixture-of-experts models")
    p.add_argument("--precision", choices=["bf16", "fp16", "fp8"],
                   help="precision whose dense peak is used (default: bf16, fp16 on V100)")
    p.add_argument("--peak-tflops", dest="peak_tflops", metavar="TF",
                   help="override the dense peak per device, in TFLOP/s")
    p.add_argument("--family", choices=["dense", "moe", "cnn", "snn"],
                   help="model family for the MFU prior (default: inferred)")
    p.add_argument("--failure-budget", dest="failure_budget", metavar="X",
                   help="multiplier for failures and re-runs (default 1.5)")


def _run_spec(args: argparse.Namespace) -> RunSpec:
    return RunSpec(**_given(args, *RUN_FIELDS))


def _cmd_estimate(args: argparse.Namespace) -> None:
    estimate = estimate_run(_run_spec(args))
    _emit(args, estimate, render_estimate(estimate, closing=False))


def _number(value: str, field: str) -> float:
    """A plain signed number (gains may be negative); the skill checks it is finite."""
    try:
        return float(value)
    except ValueError:
        raise InputError(field, value, "a number, e.g. 1.5 or -0.2") from None


def _optional_quantity(value: str | None, field: str) -> float | None:
    return None if value is None else parse_quantity(value, field)


def _cmd_decide(args: argparse.Namespace) -> None:
    estimate = estimate_run(_run_spec(args))
    decision = decision_summary(
        estimate,
        _number(args.gain, "predicted_gain"),
        _number(args.uncertainty, "gain_uncertainty"),
        _number(args.baseline, "baseline_to_beat"),
        usd_per_unit_gain=_optional_quantity(args.value_per_unit, "usd_per_unit_gain"),
        budget_usd=_optional_quantity(args.budget_usd, "budget_usd"),
        benefit=args.benefit,
    )
    _emit(args, decision, render_decision(decision))


def _cmd_alternatives(args: argparse.Namespace) -> None:
    report = suggest_alternatives(
        _run_spec(args),
        teacher_params=_optional_quantity(args.teacher_params, "teacher_params"),
    )
    _emit(args, report.alternatives, render_alternatives(report))


MEMORY_FIELDS = ("params", "config", "preset", "gpu_count", "gpu", "zero", "tp", "pp", "sp",
                 "optimizer", "trainable_params", "seq_len", "micro_batch", "recompute",
                 "flash_attention", "layers", "hidden", "heads")


def _cmd_memory(args: argparse.Namespace) -> None:
    memory = estimate_memory(MemorySpec(**_given(args, *MEMORY_FIELDS)))
    _emit(args, memory, render_memory(memory))


def _cmd_params(args: argparse.Namespace) -> None:
    if args.list_presets:
        reports = [param_report(get_preset(name)) for name in list_presets()]
        _emit(args, reports, render_presets(reports))
        return
    source = ModelSource(**_given(args, "config", "preset"))
    arch = source.architecture
    if arch is None:
        raise InputError("config", None, "a config.json path (--config) or a preset (--preset)")
    report = param_report(arch)
    _emit(args, report, render_params(report))


def _cmd_split(args: argparse.Namespace) -> None:
    fields = _given(args, "budget_flops", "budget_usd", "ratio", "flops_per_sec", "utilization",
                    "gpu", "gpu_count", "mfu", "usd_per_gpu_hour")
    if args.sizes is not None:
        fields["params"] = [s for s in args.sizes.split(",") if s.strip()]
    split = budget_split(SplitSpec(**fields))
    _emit(args, split, render_split(split))


def _cmd_gpus(args: argparse.Namespace) -> None:
    accelerators = list(list_accelerators())
    _emit(args, accelerators, render_accelerators(accelerators, show_sources=args.sources))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; every subcommand has help (a test checks it)."""
    parser = _Parser(
        prog="compute-budget",
        description="Estimate the FLOPs, time, memory and dollars of a training run, and decide "
                    "whether its predicted gain is worth it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    def command(name: str, help_text: str, func: Callable[[argparse.Namespace], None],
                ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.set_defaults(func=func)
        return p

    p = command("estimate", "FLOPs, wall time, GPU-hours and dollars of a run, with a range",
                _cmd_estimate)
    _add_run_flags(p)

    p = command("decide", "go / marginal / no-go: is the predicted gain worth the cost?",
                _cmd_decide)
    _add_run_flags(p)
    p.add_argument("--gain", required=True,
                   help="predicted gain in your metric, higher is better (a loss reduction is "
                        "a positive number)")
    p.add_argument("--uncertainty", required=True, help="1σ uncertainty of the gain, same units")
    p.add_argument("--baseline", required=True,
                   help="gain the run must beat (e.g. what a cheaper option gives), same units")
    p.add_argument("--value-per-unit", dest="value_per_unit", metavar="USD",
                   help="US dollars one unit of gain is worth (optional)")
    p.add_argument("--budget-usd", dest="budget_usd", metavar="USD",
                   help="budget cap in US dollars (optional)")
    p.add_argument("--benefit", help="the concrete benefit: publication, deployment, contract")

    p = command("alternatives", "cheaper alternatives, each with its own estimate and saving",
                _cmd_alternatives)
    _add_run_flags(p)
    p.add_argument("--teacher-params", dest="teacher_params", metavar="N",
                   help="size of the existing model to distil from (default: 4x the model)")

    p = command("memory", "memory per device: weights, gradients, optimizer, activations",
                _cmd_memory)
    _add_model_flags(p)
    p.add_argument("--gpus", dest="gpu_count", required=True, metavar="K",
                   help="number of devices")
    p.add_argument("--gpu", metavar="NAME", help="accelerator, to answer whether it fits")
    p.add_argument("--zero", metavar="0-3", help="ZeRO stage 0, 1, 2 or 3 (default 0)")
    _add_layout_flags(p)
    p.add_argument("--optimizer", metavar="NAME",
                   help="adamw (default), adam8bit, sgd (with momentum) or adafactor")
    p.add_argument("--trainable-params", dest="trainable_params", metavar="N",
                   help="trainable parameters when the rest are frozen (LoRA)")
    p.add_argument("--no-flash-attention", dest="flash_attention", action="store_const",
                   const=False, help="attention stores the s×s scores (no FlashAttention)")
    p.add_argument("--layers", metavar="L", help="transformer layers (with --hidden, --heads)")
    p.add_argument("--hidden", metavar="H", help="hidden size")
    p.add_argument("--heads", metavar="A", help="attention heads")

    p = command("params", "exact parameter counts of an architecture, by component",
                _cmd_params)
    p.add_argument("--config", metavar="PATH", help="a local Hugging Face config.json")
    p.add_argument("--preset", metavar="NAME", help="a named architecture")
    p.add_argument("--list", dest="list_presets", action="store_true",
                   help="list the presets and exit")

    p = command("split", "the budget-split table: N and D = C/6N for one compute budget",
                _cmd_split)
    p.add_argument("--budget", dest="budget_flops", metavar="C",
                   help="compute budget in FLOPs, e.g. 6e14, 1e24")
    p.add_argument("--budget-usd", dest="budget_usd", metavar="USD",
                   help="or a budget in US dollars (needs --gpu)")
    p.add_argument("--ratio", metavar="R", help="tokens per parameter to highlight (default 20)")
    p.add_argument("--sizes", metavar="N,N,...", help="model sizes for the rows, e.g. 1B,7B,70B")
    p.add_argument("--flops-per-sec", dest="flops_per_sec", metavar="F",
                   help="peak FLOP/s of the machine (default 1e12)")
    p.add_argument("--utilization", metavar="U", help="fraction of the peak achieved (0, 1]")
    p.add_argument("--gpu", metavar="NAME", help="derive FLOP/s from this accelerator")
    p.add_argument("--gpus", dest="gpu_count", metavar="K", help="number of devices (with --gpu)")
    p.add_argument("--mfu", metavar="F", help="MFU with --gpu (default: dense prior)")
    p.add_argument("--price", dest="usd_per_gpu_hour", metavar="USD",
                   help="US dollars per device-hour for --budget-usd (default: catalog)")

    p = command("gpus", "the accelerator catalog: dense peaks, memory, prices, sources",
                _cmd_gpus)
    p.add_argument("--sources", action="store_true", help="also print every source")
    return parser


def _attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--params -7B`` → ``--params=-7B``, so argparse does not take ``-7B`` for a flag and the
    value reaches validation, which names the flag and says what is allowed."""
    out: list[str] = []
    for token in argv:
        if (out and out[-1].startswith("--") and "=" not in out[-1]
                and len(token) > 1 and token[0] == "-" and (token[1].isdigit() or token[1] == ".")):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0, or 2 for bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(_attach_negative_values(sys.argv[1:] if argv is None else argv))
        args.func(args)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except (ComputeBudgetError, ValidationError) as exc:
        flags = {**FLAG_NAMES, **COMMAND_FLAGS.get(args.command, {})}
        sys.stderr.write(f"error: {describe_error(exc, flags)}\n")
        return EXIT_USAGE
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
