"""The ``compute-budget`` command line: the same models and templates as the MCP server.

Each subcommand turns its flags into a ``skill`` input model, calls one ``skill`` function and
prints the rendered markdown, or the result model as JSON with ``--json``. Bad input prints one
message naming the flag, the value and what is allowed, and exits with status 2. This module
must not import ``mcp``, and it imports from ``skill`` only what the command given needs (the
parser adds only that subcommand's flags): the CLI has to start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import ValidationError

from . import __version__, skill as sk
from .prompts import (
    render_accelerators,
    render_alternatives,
    render_comparison,
    render_decision,
    render_estimate,
    render_fit,
    render_memory,
    render_optimal,
    render_params,
    render_plan,
    render_presets,
    render_split,
)
from .skill.errors import ComputeBudgetError, InputError, describe_error

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["main"]

EXIT_USAGE = 2


class UsageError(Exception):
    """Raised instead of argparse's own exit, so every bad input is reported the same way."""


class _Parser(argparse.ArgumentParser):
    """argparse, reporting every bad input the same way, and refusing a flag given twice
    (argparse would silently keep the last value)."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}")

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.option_strings and not isinstance(
                action, argparse._HelpAction | argparse._VersionAction):
            action.__class__ = _Parser._once(type(action))
        return action

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given: dict[str, Any] = {}
        return super().parse_known_args(args, namespace)

    @staticmethod
    def _once(kind: type[argparse.Action]) -> type[argparse.Action]:
        """``kind``, refusing a second occurrence of its flag in one command line."""

        def call(self: argparse.Action, parser: argparse.ArgumentParser,
                 namespace: argparse.Namespace, values: Any, option_string: str | None = None,
                 ) -> None:
            given: dict[str, Any] = getattr(parser, "_given", {})
            if self.dest in given:
                both = ("" if values in (None, []) else
                        f" ({given[self.dest]!r} and {values!r})")
                raise argparse.ArgumentError(self, f"given more than once{both}; give it once")
            given[self.dest] = values
            kind.__call__(self, parser, namespace, values, option_string)

        return type(kind.__name__, (kind,), {"__call__": call})


def _given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named flags that were actually given (None means: use the model's default)."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def _emit(args: argparse.Namespace, payload: BaseModel | list[Any], markdown: str) -> None:
    if args.json:
        def plain(item: Any) -> Any:
            return item.model_dump(mode="json") if hasattr(item, "model_dump") else item

        data = plain(payload) if hasattr(payload, "model_dump") else [plain(p) for p in payload]
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(markdown)


# --- flags: help from the model fields, so a flag and a tool argument read the same -----------

def _literal_choices(annotation: Any) -> list[Any] | None:
    """The values of a ``Literal`` annotation (inside ``X | None`` or ``Annotated``)."""
    from typing import Annotated, Literal, Union, get_args, get_origin

    origin = get_origin(annotation)
    if origin is Literal:
        return list(get_args(annotation))
    if origin in (Union, Annotated) or type(annotation).__name__ == "UnionType":
        for member in get_args(annotation):
            found = _literal_choices(member)
            if found:
                return found
    return None


def _flag(
    p: argparse.ArgumentParser,
    model: type[BaseModel],
    field: str,
    flag: str | None = None,
    *,
    note: str = "",
    **options: Any,
) -> None:
    """Add ``--field`` (or ``flag``) with the field's own description as its help, and the
    field's own choices when it is a Literal."""
    description = model.model_fields[field].description or field
    choices = _literal_choices(model.model_fields[field].annotation)
    if choices and "action" not in options:
        options.setdefault("choices", choices)
    p.add_argument(flag or "--" + field.replace("_", "-"), dest=field,
                   help=description + (f" {note}" if note else ""), **options)


def _add_model_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    _flag(p, model, "params", metavar="N")
    _flag(p, model, "model_id", "--model", metavar="ORG/NAME")
    _flag(p, model, "config", metavar="PATH")
    _flag(p, model, "preset", metavar="NAME", note="(`compute-budget params --list`)")


def _add_fine_tuning_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.ModelAndLayout, "active_params", metavar="N")
    _flag(p, sk.ModelAndLayout, "trainable_params", metavar="N")
    _flag(p, sk.ModelAndLayout, "lora_rank", metavar="R", type=int)
    _flag(p, sk.ModelAndLayout, "lora_targets")
    _flag(p, sk.ModelAndLayout, "weights_bits", type=int)
    for field, metavar in (("layers", "L"), ("hidden", "H"), ("heads", "A")):
        _flag(p, sk.ModelAndLayout, field, metavar=metavar)


def _add_layout_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    _flag(p, model, "seq_len", metavar="S")
    _flag(p, model, "micro_batch", metavar="B")
    _flag(p, model, "zero", metavar="0-3")
    _flag(p, model, "tp", metavar="T")
    _flag(p, model, "pp", metavar="P")
    _flag(p, model, "sp", action="store_const", const=True)
    _flag(p, model, "ep", metavar="E")
    _flag(p, model, "recompute")
    _flag(p, model, "offload", action="store_const", const=True)
    _flag(p, model, "optimizer", metavar="NAME")
    _flag(p, model, "stack")
    _flag(p, model, "flash_attention", "--no-flash-attention", action="store_const",
          const=False, note="Give this flag for attention that stores the s×s attention scores.")


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.RunSpec, "tokens", required=True, metavar="T")
    _flag(p, sk.RunSpec, "gpu", required=True, metavar="NAME", note="(`compute-budget gpus`)")
    _flag(p, sk.RunSpec, "gpu_count", "--gpus", required=True, metavar="K")
    _add_model_flags(p, sk.RunSpec)
    _add_fine_tuning_flags(p)
    _flag(p, sk.RunSpec, "mfu", metavar="F")
    _flag(p, sk.RunSpec, "achieved_tflops", metavar="TF")
    _flag(p, sk.RunSpec, "usd_per_gpu_hour", "--price", metavar="USD")
    _flag(p, sk.RunSpec, "price_kind")
    _flag(p, sk.RunSpec, "mfu_convention")
    _flag(p, sk.RunSpec, "precision")
    _flag(p, sk.RunSpec, "peak_tflops", metavar="TF")
    _flag(p, sk.RunSpec, "family")
    _flag(p, sk.RunSpec, "failure_budget", metavar="X")
    _flag(p, sk.RunSpec, "kind")
    _flag(p, sk.RunSpec, "board_power_w", metavar="W")
    _flag(p, sk.RunSpec, "pue", metavar="X")
    _flag(p, sk.RunSpec, "grid_kg_co2_per_kwh", metavar="KG")
    _add_layout_flags(p, sk.RunSpec)


def _run_spec(args: argparse.Namespace) -> sk.RunSpec:
    return sk.RunSpec(**_given(args, *sk.RunSpec.model_fields))


def _cmd_estimate(args: argparse.Namespace) -> None:
    estimate = sk.estimate_run(_run_spec(args))
    _emit(args, estimate, render_estimate(estimate, closing=False, detail=args.detail))


def _number(value: str, field: str) -> float:
    """A plain signed number (gains may be negative); the skill checks it is finite."""
    try:
        return float(value)
    except ValueError:
        raise InputError(field, value, "a number, e.g. 1.5 or -0.2") from None


def _cmd_decide(args: argparse.Namespace) -> None:
    estimate = sk.estimate_run(_run_spec(args))
    def number(field: str) -> float | None:
        value = getattr(args, field)
        return None if value is None else _number(value, field)

    inputs = sk.DecisionInputs(**{k: v for k, v in {
        "predicted_gain": number("predicted_gain"),
        "gain_uncertainty": number("gain_uncertainty"),
        "baseline_to_beat": number("baseline_to_beat"),
        "metric_now": number("metric_now"),
        "metric_expected": number("metric_expected"),
        "higher_is_better": False if args.lower_is_better else None,
        "usd_per_unit_gain": args.usd_per_unit_gain,
        "budget_usd": args.budget_usd,
        "benefit": args.benefit,
    }.items() if v is not None})
    gain = None
    if args.points is not None or args.baseline_loss is not None:
        fields: dict[str, Any] = {"baseline_loss": None if args.baseline_loss is None
                                  else _number(args.baseline_loss, "baseline_loss")}
        if args.points is not None:
            text, fmt = _read_data_file(args.points, "points")
            fields["points"] = sk.parse_points(text, fmt=fmt)  # type: ignore[arg-type]
        gain = sk.GainFromPoints(**fields)
    decision = sk.decide(estimate, inputs, gain)
    _emit(args, decision, render_decision(decision))


def _cmd_alternatives(args: argparse.Namespace) -> None:
    options = sk.AlternativesOptions(**_given(args, "teacher_params", "predicted_gain",
                                           "gain_uncertainty"))
    report = sk.suggest_alternatives(_run_spec(args), **options.model_dump())
    _emit(args, report.alternatives, render_alternatives(report))


def _cmd_memory(args: argparse.Namespace) -> None:
    memory = sk.estimate_memory(sk.MemorySpec(**_given(args, *sk.MemorySpec.model_fields)))
    _emit(args, memory, render_memory(memory))


def _cmd_params(args: argparse.Namespace) -> None:
    if args.list_presets:
        reports = [sk.param_report(sk.get_preset(name)) for name in sk.list_presets()]
        _emit(args, reports, render_presets(reports))
        return
    source = sk.ModelSource(**_given(args, "config", "preset", "model_id"))
    arch = source.architecture
    if arch is None:
        raise InputError("config", None, "a config.json path (--config), a Hugging Face model "
                                         "id (--model) or a preset (--preset)")
    report = sk.param_report(arch)
    _emit(args, report, render_params(report))


def _cmd_split(args: argparse.Namespace) -> None:
    fields = _given(args, "budget_flops", "budget_usd", "ratio", "flops_per_sec", "gpu",
                    "gpu_count", "mfu", "usd_per_gpu_hour", "failure_budget")
    if args.params is not None:
        fields["params"] = [s for s in args.params.split(",") if s.strip()]
    if args.utilization is not None:  # the deprecated name of --mfu
        if args.mfu is not None:
            raise InputError("utilization", args.utilization,
                             "not together with --mfu (--utilization is its old name)")
        sys.stderr.write("note: --utilization is deprecated; use --mfu\n")
        fields["mfu"] = args.utilization
    try:
        spec = sk.BudgetTableSpec(**fields)
    except ValidationError as exc:
        if args.utilization is not None and any(e["loc"] == ("mfu",) for e in exc.errors()):
            raise InputError("utilization", args.utilization,
                             "a fraction in (0, 1], e.g. 0.4 (the old name of --mfu)") from None
        raise
    split = sk.budget_table(spec)
    _emit(args, split, render_split(split))


MAX_DATA_BYTES = 1_000_000
"""Largest data file (points, candidates) the CLI reads: what the parsers accept."""


def _read_data_file(path: str, field: str) -> tuple[str, str | None]:
    """The text of the user's data file ``path`` and its format by extension (csv, json or
    None), read like a config file (a regular UTF-8 file, checked before it is opened) of at
    most MAX_DATA_BYTES."""
    import os

    from .skill.model.config_file import UnreadableFileError, read_small_text

    try:
        text = read_small_text(os.path.realpath(path), MAX_DATA_BYTES)
    except UnreadableFileError as exc:
        raise InputError(field, path, f"a readable .csv or .json file ({exc.reason})") from None
    suffix = os.path.splitext(path)[1].lower()
    return text, {".csv": "csv", ".json": "json"}.get(suffix)


def _cmd_compare(args: argparse.Namespace) -> None:
    text, fmt = _read_data_file(args.file, "file")
    rows = sk.parse_candidates(text, fmt=fmt)  # type: ignore[arg-type]
    spec = sk.CompareSpec(candidates=rows, **_given(
        args, "baseline_to_beat", "usd_per_unit_gain", "budget_usd", "pool_gpu_days",
        "horizon_days"))
    comparison = sk.compare_candidates(spec)
    _emit(args, comparison.candidates, render_comparison(comparison))


def _write_plot(args: argparse.Namespace, picture: object) -> None:
    """Draw ``picture`` to the ``--plot`` file (matplotlib is imported only here)."""
    from .prompts.plots import draw_png

    png = draw_png(picture)  # type: ignore[arg-type]
    try:
        with open(args.plot, "wb") as handle:
            handle.write(png)
    except OSError as exc:
        raise InputError("plot", args.plot, f"a file path that can be written "
                         f"({exc.strerror or type(exc).__name__})") from None


def _cmd_fit(args: argparse.Namespace) -> None:
    fields = _given(args, "target_compute", "target_params", "target_tokens", "baseline_loss",
                    "baseline_params", "baseline_tokens", "level")
    if args.higher_is_better:
        fields["higher_is_better"] = True
    if args.points is not None:
        text, fmt = _read_data_file(args.points, "points")
        fields["points"] = sk.parse_points(text, fmt=fmt)  # type: ignore[arg-type]
    result = sk.predict(sk.FitSpec(**fields))
    if args.plot is not None:
        from .prompts.plots import fit_picture_data

        if isinstance(result, sk.ScalingFit):
            _write_plot(args, fit_picture_data(result, fields["points"]))
        else:
            raise InputError("plot", args.plot, "a fit of your points (--points) to draw")
    _emit(args, result, render_fit(result))


def _cmd_optimal(args: argparse.Namespace) -> None:
    result = sk.optimal(sk.OptimalSpec(**_given(args, "flops", "params", "tokens")))
    _emit(args, result, render_optimal(result))


def _pairs(text: str, field: str) -> dict[str, str]:
    """``h100=64,a100=128`` → {"h100": "64", "a100": "128"}."""
    out: dict[str, str] = {}
    for item in (i.strip() for i in text.split(",") if i.strip()):
        name, sep, count = item.partition("=")
        if not sep or not name.strip() or not count.strip():
            raise InputError(field, text, "NAME=COUNT pairs separated by commas, e.g. "
                                          "h100=64,a100=128")
        out[name.strip()] = count.strip()
    return out


def _cmd_plan(args: argparse.Namespace) -> None:
    fields = _given(args, *(f for f in sk.PlanSpec.model_fields
                            if f not in ("gpus", "available")))
    if args.gpus is not None:
        fields["gpus"] = [g.strip() for g in args.gpus.split(",") if g.strip()]
    if args.available is not None:
        fields["available"] = _pairs(args.available, "available")
    report = sk.plan_run(sk.PlanSpec(**fields))
    if args.plot is not None:
        from .prompts.plots import plan_picture_data

        _write_plot(args, plan_picture_data(report, report.deadline_days, report.budget_usd))
    _emit(args, report, render_plan(report))


def _cmd_gpus(args: argparse.Namespace) -> None:
    accelerators = list(sk.list_accelerators())
    _emit(args, accelerators, render_accelerators(accelerators, show_sources=args.sources))


def _decide_flags(p: argparse.ArgumentParser) -> None:
    _add_run_flags(p)
    _flag(p, sk.DecisionInputs, "predicted_gain", "--gain", metavar="G")
    _flag(p, sk.DecisionInputs, "gain_uncertainty", "--uncertainty", metavar="S")
    _flag(p, sk.DecisionInputs, "baseline_to_beat", "--baseline", metavar="B")
    _flag(p, sk.DecisionInputs, "metric_now", metavar="M")
    _flag(p, sk.DecisionInputs, "metric_expected", metavar="M")
    p.add_argument("--lower-is-better", action="store_true",
                   help="The metric is a loss or a perplexity (with --metric-now and "
                        "--metric-expected).")
    _flag(p, sk.DecisionInputs, "usd_per_unit_gain", "--value-per-unit", metavar="USD")
    _flag(p, sk.DecisionInputs, "budget_usd", metavar="USD")
    _flag(p, sk.DecisionInputs, "benefit", metavar="TEXT")
    p.add_argument("--points", metavar="FILE",
                   help="Instead of --gain and --uncertainty: small runs (a .csv with "
                        "compute,loss or params,tokens,loss, or .json), fitted; the gain is "
                        "the fit's at this run over --baseline-loss, with its 1σ.")
    _flag(p, sk.GainFromPoints, "baseline_loss", metavar="L")


def _alternatives_flags(p: argparse.ArgumentParser) -> None:
    _add_run_flags(p)
    _flag(p, sk.AlternativesOptions, "teacher_params", metavar="N")
    _flag(p, sk.AlternativesOptions, "predicted_gain", "--gain", metavar="G")
    _flag(p, sk.AlternativesOptions, "gain_uncertainty", "--uncertainty", metavar="S")


def _memory_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.MemorySpec, "gpu_count", "--gpus", required=True, metavar="K")
    _flag(p, sk.MemorySpec, "gpu", metavar="NAME")
    _add_model_flags(p, sk.MemorySpec)
    _add_fine_tuning_flags(p)
    _add_layout_flags(p, sk.MemorySpec)


def _params_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.ModelSource, "config", metavar="PATH")
    _flag(p, sk.ModelSource, "preset", metavar="NAME")
    _flag(p, sk.ModelSource, "model_id", "--model", metavar="ORG/NAME")
    p.add_argument("--list", dest="list_presets", action="store_true",
                   help="list the presets and exit")


def _split_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.BudgetTableSpec, "budget_flops", "--budget", metavar="C")
    _flag(p, sk.BudgetTableSpec, "budget_usd", metavar="USD")
    _flag(p, sk.BudgetTableSpec, "ratio", metavar="R")
    _flag(p, sk.BudgetTableSpec, "params", "--sizes", metavar="N,N,...",
          note="Comma-separated, e.g. 1B,7B,70B.")
    _flag(p, sk.BudgetTableSpec, "flops_per_sec", metavar="F")
    _flag(p, sk.BudgetTableSpec, "gpu", metavar="NAME", note="(`compute-budget gpus`)")
    _flag(p, sk.BudgetTableSpec, "gpu_count", "--gpus", metavar="K")
    _flag(p, sk.BudgetTableSpec, "mfu", metavar="F")
    p.add_argument("--utilization", metavar="U", help="Deprecated: the old name of --mfu.")
    _flag(p, sk.BudgetTableSpec, "usd_per_gpu_hour", "--price", metavar="USD")
    _flag(p, sk.BudgetTableSpec, "failure_budget", metavar="X")


def _compare_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE",
                   help="A .csv (header row) or .json list of candidates: name, params, tokens, "
                        "gpu, gpu_count, predicted_gain, gain_uncertainty, and any other run "
                        "field of `estimate` (e.g. mfu, price, kind); quantities like 7B, 1T.")
    _flag(p, sk.CompareSpec, "baseline_to_beat", "--baseline", metavar="B")
    _flag(p, sk.CompareSpec, "usd_per_unit_gain", "--value-per-unit", metavar="USD")
    _flag(p, sk.CompareSpec, "budget_usd", metavar="USD")
    _flag(p, sk.CompareSpec, "pool_gpu_days", metavar="DAYS")
    _flag(p, sk.CompareSpec, "horizon_days", metavar="DAYS")


def _fit_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--points", metavar="FILE",
                   help="Small runs: a .csv with the columns compute,loss (or params,tokens,loss) "
                        "or a .json list of such objects. Without it: the published Chinchilla "
                        "fits, for language models.")
    for field, metavar in (("target_compute", "C"), ("target_params", "N"),
                           ("target_tokens", "D"), ("baseline_loss", "L"),
                           ("baseline_params", "N"), ("baseline_tokens", "D"),
                           ("level", "P")):
        _flag(p, sk.FitSpec, field, metavar=metavar)
    _flag(p, sk.FitSpec, "higher_is_better", action="store_true")
    p.add_argument("--plot", metavar="PNG",
                   help="Also draw the points, the fitted curve with its interval band out to "
                        "the target, and the baseline, to this PNG file.")


def _optimal_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.OptimalSpec, "flops", metavar="C")
    _flag(p, sk.OptimalSpec, "params", metavar="N")
    _flag(p, sk.OptimalSpec, "tokens", metavar="D")


def _plan_flags(p: argparse.ArgumentParser) -> None:
    _flag(p, sk.PlanSpec, "tokens", required=True, metavar="T")
    _flag(p, sk.PlanSpec, "deadline_days", required=True, metavar="D")
    _flag(p, sk.PlanSpec, "budget_usd", "--budget", metavar="USD")
    _flag(p, sk.PlanSpec, "gpus", "--gpu-types", metavar="A,B",
          note="Comma-separated, e.g. h100,a100-80gb.")
    _flag(p, sk.PlanSpec, "available", metavar="A=K,...", note="E.g. h100=64,a100=128.")
    _flag(p, sk.PlanSpec, "max_gpu_count", "--max-gpus", metavar="K", type=int)
    p.add_argument("--ignore-memory", dest="must_fit", action="store_const", const=False,
                   help="Keep plans that do not fit in device memory (by default they are "
                        "dropped).")
    _flag(p, sk.PlanSpec, "max_batch_tokens", metavar="T")
    _flag(p, sk.PlanSpec, "top", metavar="K", type=int)
    _add_model_flags(p, sk.PlanSpec)
    _add_fine_tuning_flags(p)
    _flag(p, sk.PlanSpec, "mfu", metavar="F")
    _flag(p, sk.PlanSpec, "usd_per_gpu_hour", "--price", metavar="USD")
    _flag(p, sk.PlanSpec, "precision")
    _flag(p, sk.PlanSpec, "failure_budget", metavar="X")
    _flag(p, sk.PlanSpec, "kind")
    _add_layout_flags(p, sk.PlanSpec)
    p.add_argument("--plot", metavar="PNG",
                   help="Also draw cost against wall days per accelerator, with the deadline "
                        "and the budget, to this PNG file.")


def _gpus_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sources", action="store_true", help="also print every source")


_Flags = Callable[[argparse.ArgumentParser], None]
_Handler = Callable[[argparse.Namespace], None]
COMMANDS: dict[str, tuple[str, _Handler, _Flags]] = {
    "estimate": ("FLOPs, wall time, GPU-hours and dollars of a run, with a range",
                 _cmd_estimate, _add_run_flags),
    "decide": ("go / marginal / no-go: is the predicted gain worth the cost?",
               _cmd_decide, _decide_flags),
    "alternatives": ("cheaper alternatives, each with its own estimate and saving",
                     _cmd_alternatives, _alternatives_flags),
    "memory": ("memory per device: weights, gradients, optimizer, activations",
               _cmd_memory, _memory_flags),
    "params": ("exact parameter counts of an architecture, by component",
               _cmd_params, _params_flags),
    "split": ("the budget-split table: N and D = C/6N for one compute budget",
              _cmd_split, _split_flags),
    "compare": ("candidate runs side by side, ranked by gain per dollar, with the pool's "
                "best set", _cmd_compare, _compare_flags),
    "fit": ("predicted loss (and gain) at a target scale from small runs, with an interval",
            _cmd_fit, _fit_flags),
    "optimal": ("the compute-optimal params and tokens for a budget, and where a run sits",
                _cmd_optimal, _optimal_flags),
    "plan": ("the cheapest and fastest devices and counts that meet a deadline",
             _cmd_plan, _plan_flags),
    "gpus": ("the accelerator catalog: dense peaks, memory, prices, sources",
             _cmd_gpus, _gpus_flags),
}
"""Each subcommand: its help, its handler, and what adds its flags (which imports its models)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; every subcommand has help (a test checks it).

    Flags come from the models' field descriptions, and building a model's schema is most of
    a start-up's time, so ``command`` names the one subcommand to give its flags (the others
    are listed with their help, flagless); None gives every subcommand its flags.
    """
    parser = _Parser(
        prog="compute-budget",
        description="Estimate the FLOPs, time, memory and dollars of a training run, and decide "
                    "whether its predicted gain is worth it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)
    for name, (help_text, handler, add_flags) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=handler)
        if command is None or command == name:
            p.add_argument("--json", action="store_true", help="print the result as JSON")
            p.add_argument("--detail", choices=["short", "full"], default="short",
                           help="full: every source quoted and the breakdowns (default short)")
            add_flags(p)
            _help_names_flags(p)
    return parser


def _help_names_flags(p: argparse.ArgumentParser) -> None:
    """Help texts come from the model fields, which name other fields (``metric_now``,
    ```recompute```); on the command line they name the flags (``--metric-now``)."""
    import re

    flag_of = {a.dest: a.option_strings[0] for a in p._actions
               if a.option_strings and a.dest not in ("help", "json", "detail")}
    quoted = "|".join(map(re.escape, flag_of))
    bare = "|".join(re.escape(dest) for dest in flag_of if "_" in dest)
    names = re.compile(rf"`({quoted})`" + (rf"|\b({bare})\b" if bare else ""))
    for action in p._actions:
        if action.help:
            action.help = names.sub(lambda m: flag_of[m[1] or m[2]], action.help)


def _flag_names(parser: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """Field → the flag the user typed for it, for ``command``: error messages name flags."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub: argparse.ArgumentParser = subparsers.choices[command]
    flags = {a.dest: a.option_strings[0] if a.option_strings else str(a.metavar or a.dest)
             for a in sub._actions if a.dest not in ("help", "json", "detail")}
    if "model_id" in flags:  # the field's name in messages is its alias, "model"
        flags["model"] = flags["model_id"]
    return flags


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
    """Run the CLI; returns the exit status (0, or 2 for bad input).

    The reply is written only once it is known to hold finite numbers: a result with an
    infinity or a NaN in it is reported as bad input, naming the numbers given, never printed.
    """
    import contextlib
    import io
    import re

    tokens = _attach_negative_values(sys.argv[1:] if argv is None else argv)
    parser = build_parser(tokens[0] if tokens else "")
    reply = io.StringIO()
    try:
        args = parser.parse_args(tokens)
        with contextlib.redirect_stdout(reply):
            args.func(args)
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except (ComputeBudgetError, ValidationError) as exc:
        flag_of = _flag_names(parser, args.command)
        message = re.sub(  # fields named together ("layers/hidden/heads:") by their flags too
            r"^(\w+(?:/\w+)+):",
            lambda m: "/".join(flag_of.get(f, f) for f in m[1].split("/")) + ":",
            describe_error(exc, flag_of, catalog_hint="`compute-budget gpus` lists the catalog"),
            flags=re.MULTILINE)
        sys.stderr.write(f"error: {message}\n")
        return EXIT_USAGE

    text = reply.getvalue()
    flag_of = _flag_names(parser, args.command)
    given = {dest: value for dest, value in vars(args).items()
             if dest in flag_of and value is not None and not isinstance(value, bool)}
    if getattr(args, "json", False):
        odd: list[str] = []
        json.loads(text or "null", parse_constant=odd.append)  # Infinity, -Infinity, NaN
        not_finite = bool(odd)
    else:
        words = text
        for value in given.values():  # the user's own words may say "nan"
            if isinstance(value, str):
                words = words.replace(value, "")
        not_finite = re.search(r"(?<![\w.])[−-]?(inf|nan)(?!\w)", words, re.I) is not None
    if not_finite:
        def is_number(value: object) -> bool:
            try:
                sk.parse_quantity(value)
            except InputError:
                return False
            return True

        numbers = ", ".join(f"{flag_of[dest]} {value}" for dest, value in given.items()
                            if is_number(value))
        sys.stderr.write(f"error: {args.command}: these numbers give a result that is not a "
                         f"finite number: {numbers or 'the defaults'}; give values nearer "
                         "to a real run\n")
        return EXIT_USAGE
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
