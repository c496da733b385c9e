"""One depth of the probe: build the model with ``n`` decoder layers, time its training steps,
and meter one more step's memory.

A step is what training repeats: ``zero_grad``, the forward pass with
the loss (under bf16 autocast for ``bf16``: fp32 weights, bf16 matrix multiplies), the
backward pass, and ``AdamW.step`` (fp32 moments; only the trained weights: the LoRA adapters
when there are some). One step warms up (it also creates the optimizer's moments), the next is
metered (:mod:`.memory`; counting tensors slows a step, so it is not timed, and it warms up
again: on a CPU the first steps still fault fresh memory in), then ``steps`` steps are timed
with the device synchronised before each clock reading.

The gradients stay allocated between steps (``zero_grad(set_to_none=False)`` zeroes them), as
the contiguous gradient buffers of Megatron-LM and DeepSpeed do and as the estimate's memory
formula counts them: the model states are live through the whole step, so the peak holds them
and the activations at once. (PyTorch's default frees them after the optimizer step and
allocates them again in the backward pass, which can lower the peak of a model whose
activations outweigh its gradients.)
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any, Literal

from .backend import load
from .build import at_depth, build_model
from .memory import Meter, meter_for, state_tensors, storage_bytes

__all__ = ["PHASES", "Depth", "Prepared", "Setup", "measure_depth", "measure_together",
           "metered", "prepare", "release", "synchronizer", "timed_step"]

torch: Any = load("torch")

PHASES = ("forward", "backward", "optimizer")
LEARNING_RATE = 1e-5
SEED = 0


@dataclass(frozen=True)
class Setup:
    """What every depth of one probe runs with."""

    seq_len: int
    micro_batch: int
    precision: Literal["bf16", "fp32"]
    recompute: Literal["none", "full"]
    lora_rank: int | None
    steps: int
    attn_implementation: str | None
    shallowest: int
    """The probe's smaller depth (:func:`.build.at_depth` keeps DeepSeek's dense layers
    below it)."""
    clock: Callable[[], float] = time.perf_counter
    """The clock a step is timed by: wall time. (The tests time single-threaded CPU steps by
    the process's CPU time, which leaves out the time other processes of a shared machine
    hold its cores.)"""


@dataclass(frozen=True)
class Depth:
    """What one depth measured."""

    layers: int
    step_times_s: tuple[float, ...]
    params: int
    trainable_params: int
    states_bytes: int
    """Weights, buffers, gradients and optimizer moments after a step."""
    activation_bytes: int
    """Bytes live at the end of the forward pass (loss computed) minus those before it, less
    the weight copies."""
    weight_copy_bytes: int
    """The bf16 copies of the weights that autocast keeps for the backward pass (overhead)."""
    peaks: dict[str, int]
    """Peak bytes of each of :data:`PHASES`."""
    reserve_bytes: int
    method: Literal["allocator", "tensor_tracking"]
    attn_implementation: str

    @property
    def step_time_s(self) -> float:
        """The median timed step, seconds."""
        return statistics.median(self.step_times_s)


def synchronizer(device: Any) -> Callable[[], None]:
    """A function that waits for the device's queued work (nothing on CPU)."""
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    if device.type == "mps":
        return torch.mps.synchronize  # type: ignore[no-any-return]
    return lambda: None


def _phase(meter: Meter | None, name: str) -> AbstractContextManager[None]:
    return nullcontext() if meter is None else meter.phase(name)


def _step(model: Any, optimizer: Any, batch: Any, setup: Setup,
          meter: Meter | None = None) -> tuple[int, int]:
    """One training step; with a meter, the bytes the forward pass left live and the weight
    copies among them (:mod:`.memory`; else zeros)."""
    optimizer.zero_grad(set_to_none=False)
    before = 0 if meter is None else meter.live()
    autocast = (torch.autocast(batch.device.type, dtype=torch.bfloat16)
                if setup.precision == "bf16" else nullcontext())
    with _phase(meter, "forward"), autocast:
        loss = model(input_ids=batch, labels=batch, use_cache=False).loss
    kept = 0 if meter is None else meter.live() - before
    copies = 0 if meter is None else meter.weight_copy_bytes()
    with _phase(meter, "backward"):
        loss.backward()
    del loss
    with _phase(meter, "optimizer"):
        optimizer.step()
    return kept, copies


@dataclass
class Prepared:
    """One depth built and warmed up: the model, its optimizer and its batch of token ids."""

    layers: int
    model: Any
    optimizer: Any
    batch: Any
    setup: Setup
    sync: Callable[[], None]


def prepare(cfg: Any, layers: int, setup: Setup, device: Any) -> Prepared:
    """Build ``cfg`` with ``layers`` decoder layers on ``device`` and run the warm-up step."""
    torch.manual_seed(SEED)
    model = build_model(at_depth(cfg, layers, setup.shallowest), device=device,
                        attn_implementation=setup.attn_implementation,
                        recompute=setup.recompute, lora_rank=setup.lora_rank)
    trained = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trained, lr=LEARNING_RATE)
    batch = torch.randint(0, cfg.vocab_size, (setup.micro_batch, setup.seq_len), device=device)
    prepared = Prepared(layers, model, optimizer, batch, setup, synchronizer(device))
    _step(model, optimizer, batch, setup)
    return prepared


def timed_step(prepared: Prepared) -> float:
    """Seconds of one step, the device synchronised before each clock reading."""
    clock = prepared.setup.clock
    prepared.sync()
    start = clock()
    _step(prepared.model, prepared.optimizer, prepared.batch, prepared.setup)
    prepared.sync()
    return clock() - start


def metered(prepared: Prepared, times: tuple[float, ...] = ()) -> Depth:
    """Meter one more step of ``prepared``: its :class:`Depth`, with ``times`` as the times of
    its timed steps."""
    model, optimizer = prepared.model, prepared.optimizer
    meter = meter_for(prepared.batch.device)
    meter.start(state_tensors(model, optimizer), model.parameters())
    try:
        kept, copies = _step(model, optimizer, prepared.batch, prepared.setup, meter)
    finally:
        meter.stop()
    return Depth(
        layers=prepared.layers, step_times_s=times,
        params=sum(p.numel() for p in model.parameters()),
        trainable_params=sum(p.numel() for p in model.parameters() if p.requires_grad),
        states_bytes=storage_bytes(state_tensors(model, optimizer)),
        activation_bytes=max(0, kept - copies), weight_copy_bytes=copies,
        peaks=dict(meter.peaks),
        reserve_bytes=meter.reserve(), method=meter.method,  # type: ignore[arg-type]
        attn_implementation=str(model.config._attn_implementation))


def measure_depth(cfg: Any, layers: int, setup: Setup, device: Any) -> Depth:
    """Build ``cfg`` with ``layers`` decoder layers on ``device``, warm up, meter a step,
    time ``setup.steps`` steps; then free it all."""
    prepared = prepare(cfg, layers, setup, device)
    memory = metered(prepared)
    times = tuple(timed_step(prepared) for _ in range(setup.steps))
    depth = replace(memory, step_times_s=times)
    del prepared
    release(device)
    return depth


def measure_together(cfg: Any, depths: tuple[int, ...], setup: Setup,
                     device: Any) -> dict[int, Depth]:
    """Measure ``depths`` side by side: every depth built, warmed up and metered, then the timed
    steps taken in turns (one step of each depth per round), so that a change in what else the
    machine runs falls on every depth alike. For a CPU, which other processes share; it holds
    all the depths' models at once."""
    prepared = [prepare(cfg, n, setup, device) for n in depths]
    memory = {p.layers: metered(p) for p in prepared}
    times: dict[int, list[float]] = {n: [] for n in depths}
    for _ in range(setup.steps):
        for p in prepared:
            times[p.layers].append(timed_step(p))
    del prepared
    release(device)
    return {n: replace(memory[n], step_times_s=tuple(times[n])) for n in depths}


def release(device: Any) -> None:
    """Free what the last depth left (collected objects, the allocator's cache)."""
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps":
        torch.mps.empty_cache()
