"""Measure the bytes a real Hugging Face transformers model saves for the backward pass.

Run by hand, never in the test suite, in an environment that has torch and transformers (the
``measure`` dependency group in ``pyproject.toml``), from the repository root::

    uv run --group measure python -m benchmarks.activation_memory
    python -m benchmarks.activation_memory --families llama3_8b,mixtral_8x7b --seq-lens 512,1024

(or, to keep a CUDA torch build off a CPU-only machine, ``pip install torch 'transformers>=5'``
into a separate venv and run the second line with its python, ``PYTHONPATH=src``; the whole run
takes about 40 minutes on two cores and 12 GB). It writes
``benchmarks/data/activation_memory.json``, which the tests read to pin the analytic
activation-memory formula to real numbers. ``--merge`` keeps the families already in the file
(for trying one); the committed file is one full run.

Every family the config reader accepts is measured (:data:`FAMILIES`), each at the attention
implementation transformers picks for it by default (``from_config`` without
``attn_implementation``: eager for Gemma 2, SDPA elsewhere; recorded) and at other variants
(:class:`Variant`): eager where the default is SDPA, a FlashAttention stand-in for Gemma 2, a
masked sliding window, and where the CPU cannot run what a GPU runs, the variant the formula is
pinned to (:attr:`Family.pinned`).

Method, per model family and variant:

1. Build the model from a config with the real checkpoint's shapes (hidden, intermediate, heads,
   KV heads, experts, top-k; see :data:`FAMILIES`; DeepSeek-V3 at a smaller size with its
   layout) and random weights: ``AutoModelForCausalLM.from_config(config,
   dtype=torch.bfloat16)`` with the variant's ``attn_implementation``, on CPU, in train mode
   (dropout as the config says). The experts implementation is whatever ``from_config`` picks
   by default (recorded).
2. Run one forward pass with ``labels`` (so the loss is computed as in training), batch 1, random
   ``input_ids``, inside ``torch.autograd.graph.saved_tensors_hooks(pack, unpack)``. ``pack``
   records every tensor autograd saves for the backward pass, deduplicated by storage
   (``untyped_storage().data_ptr()``, counted at ``untyped_storage().nbytes()``), and skips the
   storages of parameters and buffers. Forward pre-/post-hooks keep the name of the innermost
   module running, which labels each storage; a walk of the autograd graph afterwards names the
   ops (``grad_fn`` and saved-slot, e.g. ``MmBackward0.self``) that saved each storage. No
   backward pass is run.
3. Per decoder layer: the same config with ``L1`` and ``L2`` layers gives totals ``T1``, ``T2``;
   ``bytes_per_layer = (T2 - T1) / (L2 - L1)`` and the rest, ``T1 - L1 * bytes_per_layer``, is
   the non-layer part (embedding output, final norm, LM-head input, fp32 logits, loss). This is
   repeated at several sequence lengths: with a fused SDPA kernel and no mask no ``s × s``
   tensor is saved, so ``bytes_per_token_per_layer = bytes_per_layer / (micro_batch · s)``
   does not depend on ``s``; eager attention and a mask add terms linear in ``s`` (fitted in
   ``fit_in_seq_len``). The coefficient ``bytes_per_token_per_layer / hidden_size`` is reported
   too.
4. A breakdown of one decoder layer (the last layer of the ``L2`` model, at the longest sequence)
   lists each distinct saved storage: the module that first saved it, the ops that saved it, its
   shape, dtype and bytes (also per token and per token per hidden). Storages that several layers
   save (RoPE cos/sin) are listed apart as shared, and the non-layer storages are listed too.

Two CPU artefacts to keep in mind (both recorded in the JSON): when torch's CPU flash-attention
kernel cannot run (attention dropout > 0, or q/k head dim != v head dim as in DeepSeek's MLA)
SDPA falls back to its math path, which saves fp32 copies of q, k, v and ``s × s`` probabilities
that a GPU kernel would not (the pinned variants avoid it: GPT-2 with attention dropout off,
which a GPU flash kernel applies inside keeping only its RNG state; DeepSeek with an attention
stand-in keeping what the GPU memory-efficient kernel keeps, :func:`register_kernel_standin`);
and CPU dropout saves a bf16 mask where CUDA saves a bool one (each breakdown row says whether
it is such a mask, and ``cpu_dropout_mask_bytes_per_token_per_layer`` sums them). CPU LayerNorm
also keeps its mean and rstd in bf16 where CUDA keeps fp32 (4 bytes per token per norm).

Tensors an autograd function keeps as plain ``ctx`` attributes instead of ``save_for_backward``
(e.g. the expert offsets of transformers' grouped-mm fallback, a few hundred bytes) never reach
``pack`` and are not counted.
"""


from __future__ import annotations

import argparse
import datetime
import gc
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .activation_families import FAMILIES, KERNEL_STANDIN, Family, Variant
from .activation_recorder import (
    MICRO_BATCH,
    SEED,
    breakdown,
    layer_list_prefix,
    measure_once,
    register_kernel_standin,
)

if TYPE_CHECKING:
    import torch

__all__ = ["DEFAULT_OUT", "DEFAULT_SEQ_LENS", "FAMILIES", "main", "measure_family"]

DEFAULT_OUT = Path(__file__).parent / "data" / "activation_memory.json"
DEFAULT_SEQ_LENS = (512, 1024, 2048)


def build_model(family: Family, variant: Variant, num_layers: int,
                max_seq: int) -> torch.nn.Module:
    """The family's model with ``num_layers`` decoder layers, random bf16 weights, train mode."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    fields = {**family.config, **variant.config}
    fields["num_hidden_layers" if family.model_type != "gpt2" else "n_layer"] = num_layers
    positions = fields.get(family.min_positions_field)
    if positions is not None and positions < max_seq:
        fields[family.min_positions_field] = max_seq
    config = AutoConfig.for_model(family.model_type, **fields)
    torch.manual_seed(SEED)
    if variant.attn_implementation == KERNEL_STANDIN:
        register_kernel_standin()
    kwargs = {} if variant.attn_implementation is None else {
        "attn_implementation": variant.attn_implementation}
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16, **kwargs)
    if variant.forced is not None:
        model.config._attn_implementation = variant.forced
    model.train()
    return model


def hidden_size(model: torch.nn.Module) -> int:
    return int(model.config.hidden_size)


MATH_FALLBACK_CAVEAT = (
    "SDPA did not run torch's CPU flash-attention kernel (it needs equal q/k/v head dims and no "
    "dropout) but the math fallback, which on CPU upcasts bf16 q, k, v to fp32 and saves fp32 "
    "copies of q, k^T, v and the s x s attention probabilities (with dropout also the s x s "
    "mask and the dropped probabilities). GPU flash / memory-efficient kernels save none of the "
    "s x s tensors (bf16 q, k, v, output and an fp32 logsumexp instead), so the per-layer bytes "
    "and their growth in s here are a CPU artefact for the attention part."
)


def fit_in_seq_len(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Least squares ``bytes_per_token_per_layer = a + b * seq_len`` over the measured lengths.

    ``b`` is 0 when no ``s x s`` tensor is saved; otherwise ``b * s`` bytes per token per layer
    grow with the context (``b`` = bytes per element of the saved ``s x s`` tensors x heads).
    """
    import statistics

    if len(rows) < 2:
        return None
    xs = [float(row["seq_len"]) for row in rows]
    ys = [float(row["bytes_per_token_per_layer"]) for row in rows]
    slope, intercept = statistics.linear_regression(xs, ys)
    residual = max(abs(y - (intercept + slope * x)) for x, y in zip(xs, ys, strict=True))
    return {
        "bytes_per_token_per_layer_constant": intercept,
        "bytes_per_token_per_layer_per_seq_len": slope,
        "max_abs_residual": residual,
    }


def run_layer_counts(family: Family, variant: Variant, seq_lens: Sequence[int]
                     ) -> tuple[dict[int, dict[int, dict[str, Any]]], dict[str, Any]]:
    """Totals at both layer counts and every sequence length; what the model was built as."""
    totals: dict[int, dict[int, dict[str, Any]]] = {}
    info: dict[str, Any] = {}
    for num_layers in family.layer_counts:
        build_start = time.perf_counter()
        model = build_model(family, variant, num_layers, max(seq_lens))
        build_seconds = time.perf_counter() - build_start
        totals[num_layers] = {}
        for seq_len in seq_lens:
            print(f"  {family.name}: {num_layers} layers, s={seq_len}", file=sys.stderr, flush=True)
            run = measure_once(model, seq_len)
            run["build_seconds"] = round(build_seconds, 2)
            run["prefix"] = layer_list_prefix(model, num_layers)
            totals[num_layers][seq_len] = run
            print(f"    total {run['total_bytes']:,} B, forward {run['forward_seconds']} s",
                  file=sys.stderr, flush=True)
        config = model.config
        info = {
            "hidden_size": hidden_size(model),
            "attn_implementation": config._attn_implementation,
            # Dense models carry the config default ("eager") though they have no experts.
            "experts_implementation": getattr(config, "_experts_implementation", None)
            if any("Experts" in type(m).__name__ for m in model.modules()) else None,
            "config_used": {key: getattr(config, key, None)
                            for key in sorted({*family.config, family.min_positions_field})},
            "params": {**info.get("params", {}),
                       str(num_layers): sum(p.numel() for p in model.parameters())},
        }
        del model
        gc.collect()
    return totals, info


def differenced(family: Family, totals: dict[int, dict[int, dict[str, Any]]],
                seq_lens: Sequence[int], hidden: int) -> list[dict[str, Any]]:
    """Per-layer bytes at each sequence length, from the two layer counts."""
    small, large = family.layer_counts
    rows = []
    for seq_len in seq_lens:
        tokens = MICRO_BATCH * seq_len
        t_small = totals[small][seq_len]["total_bytes"]
        t_large = totals[large][seq_len]["total_bytes"]
        per_layer = (t_large - t_small) / (large - small)
        per_token = per_layer / tokens
        rows.append({
            "seq_len": seq_len,
            "micro_batch": MICRO_BATCH,
            "total_bytes": {str(small): t_small, str(large): t_large},
            "bytes_per_layer": per_layer,
            "bytes_per_token_per_layer": per_token,
            "coefficient_per_hidden": per_token / hidden,
            "non_layer_bytes": t_small - small * per_layer,
            "non_layer_bytes_per_token": (t_small - small * per_layer) / tokens,
            "forward_seconds": {str(n): totals[n][seq_len]["forward_seconds"]
                                for n in (small, large)},
            "loss": {str(n): totals[n][seq_len]["loss"] for n in (small, large)},
        })
    return rows


def attention_backend(node_names: Sequence[str]) -> str | None:
    """Which attention kernel kept tensors, from the backward nodes met."""
    kernels = [n for n in node_names if "ScaledDotProduct" in n or "KernelStandIn" in n]
    if kernels:
        return ", ".join(kernels)
    if "SafeSoftmaxBackward0" in node_names:
        return "math fallback"
    if "SoftmaxBackward0" in node_names:
        return "eager (matmul, softmax, matmul)"
    return None


def measure_variant(family: Family, variant: Variant, seq_lens: Sequence[int]) -> dict[str, Any]:
    """One attention implementation of a family: per-layer bytes and one layer's breakdown."""
    totals, info = run_layer_counts(family, variant, seq_lens)
    hidden = info["hidden_size"]
    rows = differenced(family, totals, seq_lens, hidden)
    small, large = family.layer_counts
    longest = max(seq_lens)
    run = totals[large][longest]
    tokens = MICRO_BATCH * longest
    detail = breakdown(run, large - 1, tokens, hidden)
    detail["seq_len"] = longest
    detail["num_layers"] = large
    detail["matches_differenced_bytes_per_layer"] = detail["layer_total_bytes"] == next(
        row["bytes_per_layer"] for row in rows if row["seq_len"] == longest)
    backend = attention_backend(run["node_names"])
    return {
        **info,
        "variant_notes": variant.notes,
        "config_overrides": variant.config,
        "forced_attn_implementation": variant.forced,
        "layer_counts": [small, large],
        "sdpa_backend": backend,
        "caveats": [MATH_FALLBACK_CAVEAT] if backend == "math fallback" else [],
        "cpu_dropout_mask_bytes_per_token_per_layer": detail["cpu_dropout_mask_bytes"] / tokens,
        "param_or_buffer_saves_skipped": run["skipped_param_saves"],
        "build_seconds": {str(n): totals[n][seq_lens[0]]["build_seconds"] for n in (small, large)},
        "fit_in_seq_len": fit_in_seq_len(rows),
        "results": rows,
        "breakdown": detail,
    }


def measure_family(family: Family, seq_lens: Sequence[int],
                   only: Sequence[str] | None = None) -> dict[str, Any]:
    """Every variant of a family (or the ``only`` ones)."""
    variants = {label: measure_variant(family, variant, seq_lens)
                for label, variant in family.variants.items() if not only or label in only}
    first = next(iter(variants.values()))
    return {
        "checkpoint": family.checkpoint,
        "model_type": family.model_type,
        "notes": family.notes,
        "hidden_size": first["hidden_size"],
        "config_used": first["config_used"],
        "default_attention": variants.get("default", {}).get("attn_implementation"),
        "pinned": family.pinned,
        "variants": variants,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON file to write")
    parser.add_argument(
        "--families",
        default="all",
        help=f"comma-separated, from: {','.join(FAMILIES)} (or 'all')",
    )
    parser.add_argument(
        "--seq-lens",
        default=",".join(map(str, DEFAULT_SEQ_LENS)),
        help="comma-separated sequence lengths",
    )
    parser.add_argument("--variants", default="",
                        help="comma-separated variant labels to measure (default: all)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other families already in --out (for trying one family; "
                             "a committed file is one full run)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    import transformers

    names = list(FAMILIES) if args.families == "all" else args.families.split(",")
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        print(f"unknown families: {unknown}; known: {list(FAMILIES)}", file=sys.stderr)
        return 2
    seq_lens = [int(s) for s in args.seq_lens.split(",")]
    transformers.logging.set_verbosity_error()

    families: dict[str, Any] = {}
    if args.merge and args.out.exists():
        families = json.loads(args.out.read_text())["families"]
    only = [v for v in args.variants.split(",") if v]
    for name in names:
        print(f"measuring {name}", file=sys.stderr, flush=True)
        families[name] = measure_family(FAMILIES[name], seq_lens, only)

    document = {
        "description": "Bytes saved for backward by a transformers model in train mode "
        "(forward with labels, batch 1), per decoder layer by differencing two layer counts; "
        "written by benchmarks/activation_memory.py.",
        "method": "saved_tensors_hooks pack: distinct storages (data_ptr, nbytes), "
        "parameters and buffers excluded; per-layer = (T(L2) - T(L1)) / (L2 - L1).",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
        "device": "cpu",
        "dtype": "bfloat16",
        "torch_threads": torch.get_num_threads(),
        "families": families,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
