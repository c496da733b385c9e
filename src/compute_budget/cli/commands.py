"""Each command's flags and how they become its spec (:mod:`.flags` has the shared groups)."""

from __future__ import annotations

import argparse
from typing import Any

from .. import skill as sk
from .files import read_data
from .flags import (
    CommandFlags,
    Fields,
    fine_tuning_flags,
    flag,
    flash_flags,
    given,
    layout_flags,
    model_flags,
    offload_flags,
    pairs,
    run_flags,
)

__all__ = ["FLAGS"]


def _decide(p: argparse.ArgumentParser) -> None:
    model = sk.VerdictSpec
    run_flags(p, model)
    for field, name, metavar in (("predicted_gain", "--gain", "G"),
                                 ("gain_uncertainty", "--uncertainty", "S"),
                                 ("baseline_to_beat", "--baseline", "B"),
                                 ("metric_now", None, "M"), ("metric_expected", None, "M"),
                                 ("usd_per_unit_gain", "--value-per-unit", "USD"),
                                 ("budget_usd", None, "USD"), ("benefit", None, "TEXT"),
                                 ("baseline_loss", None, "L")):
        flag(p, model, field, name, metavar=metavar)
    p.add_argument("--lower-is-better", action="store_true",
                   help="The metric is a loss or a perplexity (with --metric-now and "
                        "--metric-expected).")
    p.add_argument("--points", metavar="FILE",
                   help="Instead of --gain and --uncertainty: small runs (a .csv with "
                        "compute,loss or params,tokens,loss, or .json), fitted; the gain is "
                        "the fit's at this run over --baseline-loss, with its 1σ.")


def _decide_fields(args: argparse.Namespace, model: Any) -> Fields:
    fields = given(args, *(f for f in model.model_fields if f != "points"))
    if args.lower_is_better:
        fields["higher_is_better"] = False
    if args.points is not None:
        fields["points"] = read_data(args.points, "--points", sk.parse_points)
    return fields


def _alternatives(p: argparse.ArgumentParser) -> None:
    run_flags(p, sk.AlternativesSpec)
    for field, name, metavar in (("teacher_params", None, "N"), ("predicted_gain", "--gain", "G"),
                                 ("gain_uncertainty", "--uncertainty", "S")):
        flag(p, sk.AlternativesSpec, field, name, metavar=metavar)


def _memory(p: argparse.ArgumentParser) -> None:
    model = sk.MemorySpec
    flag(p, model, "gpu_count", "--gpus", metavar="K", note="(required)")
    flag(p, model, "gpu", metavar="NAME")
    flag(p, model, "params", metavar="N")
    flag(p, model, "model_id", "--model", metavar="ORG/NAME")
    flag(p, model, "config", metavar="PATH")
    flag(p, model, "preset", metavar="NAME", note="(`compute-budget params --list`)")
    for field, metavar in (("active_params", "N"), ("trainable_params", "N"), ("layers", "L"),
                           ("hidden", "H"), ("heads", "A"), ("experts", "E"),
                           ("experts_per_token", "K"), ("seq_len", "S"),
                           ("micro_batch", "B"), ("zero", "0-3"), ("tp", "T"), ("pp", "P"),
                           ("ep", "E"), ("optimizer", "NAME")):
        flag(p, model, field, metavar=metavar)
    flag(p, model, "lora_rank", metavar="R", type=int)
    flag(p, model, "weights_bits", type=int)
    for field in ("lora_targets", "recompute", "stack"):
        flag(p, model, field)
    flag(p, model, "sp", action="store_const", const=True)
    offload_flags(p, model)
    flag(p, model, "host_ram_gib", metavar="GIB")
    flash_flags(p, model)


def _probe(p: argparse.ArgumentParser) -> None:
    model = sk.ProbeSpec
    _params(p, listing=False)
    for field, metavar in (("seq_len", "S"), ("micro_batch", "B"), ("lora_rank", "R"),
                           ("steps", "K"), ("device", "DEV")):
        flag(p, model, field, metavar=metavar)
    for field in ("precision", "recompute", "attn_implementation"):
        flag(p, model, field)
    p.add_argument("--out", default="probe.json", metavar="FILE",
                   help="Write the measurement here, for `--probe FILE` of estimate, decide, "
                        "split and plan (default probe.json; a new file or an earlier probe's).")
    p.add_argument("--force", action="store_true",
                   help="let --out overwrite a file that is not an earlier probe's")


def _write_probe(args: argparse.Namespace, report: Any) -> Any:
    """The measurement written to ``--out``; the report then names the file."""
    from .output import write_probe

    write_probe(args.out, report.probe.model_dump_json(indent=1) + "\n", force=args.force)
    return report.model_copy(update={"file": args.out})


def _params(p: argparse.ArgumentParser, listing: bool = True) -> None:
    flag(p, sk.ModelSource, "config", metavar="PATH")
    flag(p, sk.ModelSource, "preset", metavar="NAME")
    flag(p, sk.ModelSource, "model_id", "--model", metavar="ORG/NAME")
    if listing:
        p.add_argument("--list", dest="list_presets", action="store_true",
                       help="list the presets and exit")


def _split(p: argparse.ArgumentParser) -> None:
    model = sk.BudgetTableSpec
    for field, name, metavar in (("budget_flops", "--budget", "C"), ("budget_usd", None, "USD"),
                                 ("ratio", None, "R"), ("flops_per_sec", None, "F"),
                                 ("gpu_count", "--gpus", "K"), ("mfu", None, "F"),
                                 ("usd_per_gpu_hour", "--price", "USD"),
                                 ("failure_budget", None, "X")):
        flag(p, model, field, name, metavar=metavar)
    flag(p, model, "params", "--sizes", metavar="N,N,...", note="Comma-separated, e.g. 1B,7B,70B.")
    flag(p, model, "gpu", metavar="NAME", note="(`compute-budget gpus`)")
    flag(p, model, "utilization", metavar="U")
    flag(p, model, "calibration", metavar="FILE")
    flag(p, model, "probe", metavar="FILE")


def _split_fields(args: argparse.Namespace, model: Any) -> Fields:
    fields = given(args, *(f for f in model.model_fields if f != "params"))
    if args.params is not None:
        # every entry, an empty one too: the spec names its place (--sizes[1]), never drops it
        fields["params"] = [s.strip() for s in args.params.split(",")]
    return fields


def _compare(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE",
                   help="A .csv (header row) or .json list of candidates: name, params, tokens, "
                        "gpu, gpu_count, predicted_gain (or metric_now and metric_expected, "
                        "with higher_is_better), gain_uncertainty, and any other run field of "
                        "`estimate` (e.g. mfu, price, kind); quantities like 7B, 1T.")
    for field, name, metavar in (("baseline_to_beat", "--baseline", "B"),
                                 ("usd_per_unit_gain", "--value-per-unit", "USD"),
                                 ("budget_usd", None, "USD"), ("pool_gpu_days", None, "DAYS"),
                                 ("horizon_days", None, "DAYS")):
        flag(p, sk.CompareSpec, field, name, metavar=metavar)


def _compare_fields(args: argparse.Namespace, model: Any) -> Fields:
    rows = read_data(args.file, "FILE", sk.parse_candidates)
    return {"candidates": rows, **given(args, *(f for f in model.model_fields
                                                 if f != "candidates"))}


def _fit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--points", metavar="FILE",
                   help="Small runs: a .csv with the columns compute,loss (or params,tokens,loss) "
                        "or a .json list of such objects. Without it: the published Chinchilla "
                        "fits, for language models.")
    for field, metavar in (("target_compute", "C"), ("target_params", "N"),
                           ("target_tokens", "D"), ("baseline_loss", "L"),
                           ("baseline_params", "N"), ("baseline_tokens", "D"),
                           ("level", "P")):
        flag(p, sk.FitSpec, field, metavar=metavar)
    flag(p, sk.FitSpec, "higher_is_better", action="store_const", const=True)
    p.add_argument("--plot", metavar="PNG",
                   help="Also draw the points, the fitted curve with its interval band out to "
                        "the target, and the baseline, to this PNG file.")


def _fit_fields(args: argparse.Namespace, model: Any) -> Fields:
    fields = given(args, *(f for f in model.model_fields if f != "points"))
    if args.points is not None:
        fields["points"] = read_data(args.points, "--points", sk.parse_points)
    return fields


def _optimal(p: argparse.ArgumentParser) -> None:
    for field, metavar in (("flops", "C"), ("params", "N"), ("active_params", "N"),
                           ("tokens", "D")):
        flag(p, sk.OptimalSpec, field, metavar=metavar)
    flag(p, sk.OptimalSpec, "preset", metavar="NAME", note="(`compute-budget params --list`)")
    flag(p, sk.OptimalSpec, "config", metavar="PATH")
    flag(p, sk.OptimalSpec, "model_id", "--model", metavar="ORG/NAME")


def _plan(p: argparse.ArgumentParser) -> None:
    model = sk.PlanSpec
    flag(p, model, "deadline_days", metavar="D", note="(required)")
    flag(p, model, "budget_usd", "--budget", metavar="USD")
    flag(p, model, "gpus", "--gpu-types", metavar="A,B",
         note="Comma-separated, e.g. h100,a100-80gb.")
    flag(p, model, "available", metavar="A=K,...", note="E.g. h100=64,a100=128.")
    flag(p, model, "max_gpu_count", "--max-gpus", metavar="K", type=int)
    p.add_argument("--ignore-memory", dest="must_fit", action="store_const", const=False,
                   help="Keep plans that do not fit in device memory (by default they are "
                        "dropped).")
    flag(p, model, "max_batch_tokens", metavar="T")
    flag(p, model, "top", metavar="K", type=int)
    model_flags(p, model)
    fine_tuning_flags(p, model)
    for field, name, metavar in (("tokens", None, "T"), ("mfu", None, "F"),
                                 ("achieved_tflops", None, "TF"),
                                 ("usd_per_gpu_hour", "--price", "USD"),
                                 ("peak_tflops", None, "TF"), ("failure_budget", None, "X")):
        flag(p, model, field, name, metavar=metavar)
    for field in ("precision", "kind", "family", "mfu_convention"):
        flag(p, model, field)
    layout_flags(p, model)
    flag(p, model, "calibration", metavar="FILE")
    flag(p, model, "probe", metavar="FILE")
    p.add_argument("--plot", metavar="PNG",
                   help="Also draw cost against wall days per accelerator, with the deadline "
                        "and the budget, to this PNG file.")


def _plan_fields(args: argparse.Namespace, model: Any) -> Fields:
    fields = given(args, *(f for f in model.model_fields if f not in ("gpus", "available")))
    if args.gpus is not None:
        fields["gpus"] = [g.strip() for g in args.gpus.split(",")]  # an empty one is named
    if args.available is not None:
        fields["available"] = pairs(args.available, "available")
    return fields


def _gpus(p: argparse.ArgumentParser) -> None:
    flag(p, sk.CatalogQuery, "query", metavar="TEXT")
    p.add_argument("--sources", action="store_true", help="also print every source")


FLAGS: dict[str, CommandFlags] = {
    "estimate": CommandFlags(run_flags),
    "decide": CommandFlags(_decide, _decide_fields),
    "alternatives": CommandFlags(_alternatives),
    "memory": CommandFlags(_memory),
    "params": CommandFlags(_params),
    "split": CommandFlags(_split, _split_fields),
    "compare": CommandFlags(_compare, _compare_fields),
    "fit": CommandFlags(_fit, _fit_fields),
    "optimal": CommandFlags(_optimal),
    "plan": CommandFlags(_plan, _plan_fields),
    "gpus": CommandFlags(_gpus, json=lambda r: list(r.accelerators)),
    "probe": CommandFlags(_probe, after=_write_probe),
}
"""Each command's flags (the command's operation is in :mod:`compute_budget.operations`)."""
