""":func:`run_probe`: measure a model on this machine's device and extrapolate to full depth.

torch and transformers are imported when the probe runs, not when this module is imported, so
the CLI can name :class:`ProbeError` without them.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from ..skill.hardware.measured import PROBE_FORMAT, ProbeModel, ProbeResult, ProbeSetup
from .allocator import kept_freed_memory
from .backend import require
from .errors import ProbeError
from .flops import model_flops_per_token

__all__ = ["run_probe"]

_OUT_OF_MEMORY = ("out of memory", "can't allocate memory", "not enough memory",
                  "failed to allocate", "defaultcpuallocator")


def _check(seq_len: int, micro_batch: int, precision: str, recompute: str,
           lora_rank: int | None, steps: int, layers: tuple[int, ...]) -> None:
    for field, value in (("seq_len", seq_len), ("micro_batch", micro_batch), ("steps", steps)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ProbeError(f"{field}: {value!r} is not allowed; a whole number ≥ 1")
    if lora_rank is not None and (not isinstance(lora_rank, int) or lora_rank < 1):
        raise ProbeError(f"lora_rank: {lora_rank!r} is not allowed; a whole number ≥ 1 or None")
    if precision not in ("bf16", "fp32"):
        raise ProbeError(f"precision: {precision!r} is not allowed; 'bf16' or 'fp32'")
    if recompute not in ("none", "full"):
        raise ProbeError(f"recompute: {recompute!r} is not allowed; 'none' or 'full'")
    if (len(layers) != 2 or not all(isinstance(n, int) for n in layers)
            or not 0 < layers[0] < layers[1]):
        raise ProbeError(f"layers: {layers!r} is not allowed; two increasing depths ≥ 1, "
                         "e.g. (1, 2)")


def _too_big(torch: Any, exc: BaseException) -> bool:
    out_of_memory = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    if isinstance(exc, MemoryError | out_of_memory):
        return True
    return isinstance(exc, RuntimeError) and any(s in str(exc).lower() for s in _OUT_OF_MEMORY)


def _layers_phrase(layers: int) -> str:
    return "one decoder layer does" if layers == 1 else f"{layers} decoder layers do"


def _too_big_error(layers: int, setup: Any, device: Any) -> ProbeError:
    return ProbeError(f"{_layers_phrase(layers)} not fit on {device} at full width "
                      f"(seq_len {setup.seq_len}, micro_batch {setup.micro_batch}): give a "
                      "shorter sequence, a smaller micro-batch, recompute 'full' or LoRA, or a "
                      "device with more memory")


def _measure(torch: Any, cfg: Any, depths: tuple[int, int], setup: Any, device: Any,
             together: bool) -> tuple[Any, Any]:
    """The two depths, side by side when ``together`` (:func:`.measure.measure_together`),
    else one after the other (each freed before the next is built)."""
    from .measure import measure_depth, measure_together, release

    if together:
        try:
            measured = measure_together(cfg, depths, setup, device)
            return measured[depths[0]], measured[depths[1]]
        except Exception as exc:
            if not _too_big(torch, exc):
                raise
            release(device)
    done = []
    for layers in depths:
        try:
            done.append(measure_depth(cfg, layers, setup, device))
        except Exception as exc:
            if not _too_big(torch, exc):
                raise
            release(device)
            raise _too_big_error(layers, setup, device) from None
    return done[0], done[1]


def _preflight(cfg: Any, depths: tuple[int, int], setup: Any, device: Any) -> bool:
    """Refuse before building what cannot fit: the weights, gradients and AdamW moments of
    the shallower model alone exceed the memory the device has free (on a CPU the kernel
    would otherwise kill the process). True when the two depths are measured side by side: on
    a CPU, where other processes share the cores, with room for both models twice over."""
    from .build import at_depth
    from .device import available_bytes
    from .params import count_params

    free = available_bytes(device)
    if free is None:
        return False
    needed = []
    for layers in depths:
        counted = count_params(at_depth(cfg, layers, depths[0]), setup)
        if counted is None:
            return False
        needed.append(4 * counted[0] + 12 * counted[1])
    if needed[0] > free:
        raise ProbeError(f"{_layers_phrase(depths[0])} not fit on {device} at full width: "
                         f"their weights, gradients and optimizer states take "
                         f"{needed[0] / 2**30:.1f} GiB and {free / 2**30:.1f} GiB are free")
    return device.type == "cpu" and 2 * sum(needed) <= free


def run_probe(config: Mapping[str, Any], *, name: str | None, seq_len: int, micro_batch: int,
              precision: Literal["bf16", "fp32"] = "bf16",
              recompute: Literal["none", "full"] = "none", lora_rank: int | None = None,
              steps: int = 3, layers: tuple[int, int] = (1, 2), device: str | None = None,
              attn_implementation: str | None = None) -> ProbeResult:
    """Build ``config`` (a Hugging Face config.json mapping) at full width with ``layers[0]``
    and ``layers[1]`` decoder layers and random weights on ``device`` (None: CUDA or ROCm,
    then MPS, then the CPU), warm each up, meter one step's memory and time ``steps`` steps
    (:mod:`.measure`; on a CPU with room for both, the two depths side by side), and
    extrapolate by layer to the config's depth (:mod:`.extrapolate`).

    ProbeError when torch or transformers is missing, transformers cannot build the config's
    ``model_type``, or the measured layers do not fit on the device."""
    _check(seq_len, micro_batch, precision, recompute, lora_rank, steps, tuple(layers))
    torch, transformers = require()
    from .build import full_config, layer_count
    from .device import describe_device, resolve_device
    from .measure import Setup

    cfg = full_config(config)
    full_layers = layer_count(cfg)
    chosen = resolve_device(device)
    setup = Setup(seq_len=seq_len, micro_batch=micro_batch, precision=precision,
                  recompute=recompute, lora_rank=lora_rank, steps=steps,
                  attn_implementation=attn_implementation, shallowest=layers[0])
    depths = (layers[0], layers[1])
    together = _preflight(cfg, depths, setup, chosen)
    with kept_freed_memory(chosen.type):
        low, high = _measure(torch, cfg, depths, setup, chosen, together)
    probe_device, acc = describe_device(chosen)
    software = {"torch": str(torch.__version__), "transformers": str(transformers.__version__),
                "python": platform.python_version()}
    return _result(config, cfg, name, setup, (low, high), full_layers, probe_device, acc,
                   software)


def _result(config: Mapping[str, Any], cfg: Any, name: str | None, setup: Any,
            measured: tuple[Any, Any], full_layers: int, probe_device: Any, acc: Any,
            software: dict[str, str]) -> ProbeResult:
    from .extrapolate import full_memory, linear, per_layer
    from .params import count_params

    low, high = measured
    depths = (low.layers, high.layers)
    tokens = setup.seq_len * setup.micro_batch
    counted = count_params(cfg, setup)
    if counted is None:  # by layer, like the rest
        counted = (round(linear(low.params, high.params, depths, full_layers)),
                   round(linear(low.trainable_params, high.trainable_params, depths, full_layers)))
    params, trainable = counted
    step_time = linear(low.step_time_s, high.step_time_s, depths, full_layers)
    flops = model_flops_per_token(config, setup.seq_len, params=params, trainable=trainable,
                                  lora=setup.lora_rank is not None,
                                  layers=full_layers, hidden=int(cfg.hidden_size)) * tokens
    achieved = flops / step_time / 1e12
    peak_tflops = acc.peak_tflops.get("bf16") if acc is not None and \
        setup.precision == "bf16" else None
    mfu = achieved / peak_tflops if peak_tflops else None
    memory = full_memory(low, high, full_layers, tokens)
    device_memory = probe_device.memory_bytes
    return ProbeResult(
        format=PROBE_FORMAT, measured_at=datetime.now(UTC), device=probe_device,
        software=software,
        model=ProbeModel(model_type=str(cfg.model_type), name=name, layers=full_layers,
                         params=params, trainable_params=trainable),
        setup=ProbeSetup(seq_len=setup.seq_len, micro_batch=setup.micro_batch,
                         precision=setup.precision, recompute=setup.recompute,
                         lora_rank=setup.lora_rank, attn_implementation=low.attn_implementation,
                         layers_measured=depths, steps=setup.steps),
        step_time_s=step_time,
        layer_step_time_s=per_layer(low.step_time_s, high.step_time_s, depths),
        tokens_per_second=tokens / step_time, flops_per_step=flops, achieved_tflops=achieved,
        peak_tflops=peak_tflops, mfu=mfu if mfu is not None and mfu <= 1 else None,
        memory=memory,
        fits=None if device_memory is None else memory.peak_bytes <= device_memory)
