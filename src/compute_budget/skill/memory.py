"""Memory per device for training: weights, gradients, optimizer state and activations.

Model states (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
Parameter Models", Sec. 3 and Table 1), for Ψ parameters held by one model-parallel rank,
mixed precision (16-bit weights and gradients) and K bytes of optimizer state per parameter::

    weights     2·Ψ                       16-bit copy used in forward and backward
    gradients   2·Ψ_trainable             16-bit gradients
    optimizer   K·Ψ_trainable             e.g. AdamW: fp32 master + momentum + variance, K = 12

ZeRO shards these over the *data-parallel* degree N_d = devices / (TP·PP), not over all devices:
stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the weights.

Activations per transformer layer, 16-bit, sequence s, micro-batch b, hidden h, heads a, tensor
parallel t (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
Models", eq. 1–2 and Table 2)::

    no parallelism                       s·b·h·(34 + 5·a·s/h)
    tensor parallel                      s·b·h·(10 + 24/t + 5·a·s/(h·t))
    tensor + sequence parallel           s·b·h·(34/t + 5·a·s/(h·t))
    selective recomputation              drops the 5·a·s/h (attention scores) term
    FlashAttention-style kernels         also never store the s² scores: the same term goes
    full recomputation                   2·s·b·h per layer (the layer inputs; /t with SP), plus
                                         one layer's activations while it is recomputed

With a 1F1B pipeline of p stages the first stage holds p micro-batches in flight, each for L/p
layers: L layers' worth in all (Korthikanti et al. 2022, Sec. 4.2.3), so PP does not shrink the
activations of the first stage.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .architecture import count_params
from .catalog import Accelerator, get_accelerator
from .errors import InputError
from .model_source import ModelAndLayout, Recompute, check_layout, check_seq_len
from .quantities import ParamCount

__all__ = [
    "OPTIMIZERS",
    "MemoryBreakdown",
    "MemoryEstimate",
    "MemorySpec",
    "ModelShape",
    "OptimizerName",
    "Recompute",
    "activation_bytes_per_layer",
    "estimate_memory",
    "guess_shape",
    "logits_bytes",
    "model_state_bytes",
    "resolve_optimizer",
]

OptimizerName = Literal["adamw", "adam8bit", "sgd", "adafactor"]

WEIGHT_BYTES = 2.0
"""16-bit (BF16/FP16) weights used in forward and backward (mixed precision)."""
GRADIENT_BYTES = 2.0
"""16-bit gradients (mixed precision)."""
HEAD_DIM_GUESS = 128
"""Head size assumed when the shape is guessed (GPT-3 and Llama families use 128)."""
ASPECT_RATIO_GUESS = 128
"""hidden / layers assumed when the shape is guessed (GPT-3 6.7B–175B: 4096/32 … 12288/96)."""
USABLE_FRACTION = 0.90
"""Share of device memory a run may fill and still count as fitting: the CUDA context, NCCL
buffers and allocator fragmentation take the rest (a few GiB on an 80 GB device)."""


class OptimizerInfo(BaseModel):
    """Bytes of optimizer state per trainable parameter, with what they hold and the source."""

    model_config = ConfigDict(frozen=True)

    name: OptimizerName
    bytes_per_param: float = Field(description="K: optimizer-state bytes per trainable parameter.")
    holds: str = Field(description="What the K bytes hold.")
    source: str


OPTIMIZERS: dict[OptimizerName, OptimizerInfo] = {
    "adamw": OptimizerInfo(
        name="adamw", bytes_per_param=12,
        holds="fp32 master weights, momentum and variance (4 + 4 + 4 bytes)",
        source="Rajbhandari et al. 2020 (ZeRO), Sec. 3: K = 12 for mixed-precision Adam",
    ),
    "adam8bit": OptimizerInfo(
        name="adam8bit", bytes_per_param=6,
        holds="fp32 master weights and 8-bit momentum and variance (4 + 1 + 1 bytes)",
        source="Dettmers et al. 2022, '8-bit Optimizers via Block-wise Quantization'",
    ),
    "sgd": OptimizerInfo(
        name="sgd", bytes_per_param=8,
        holds="fp32 master weights and momentum (4 + 4 bytes)",
        source="SGD with momentum under mixed precision (fp32 master copy + one fp32 buffer)",
    ),
    "adafactor": OptimizerInfo(
        name="adafactor", bytes_per_param=4,
        holds="fp32 master weights; the factored second moment (rows + columns per matrix) is "
              "negligible and there is no momentum (4 bytes)",
        source="Shazeer & Stern 2018, 'Adafactor: Adaptive Learning Rates with Sublinear Memory "
               "Cost' (β1 = 0)",
    ),
}

_OPTIMIZER_ALIASES: dict[str, OptimizerName] = {
    "adamw": "adamw", "adam": "adamw", "adamwmixedprecision": "adamw", "fusedadam": "adamw",
    "adam8bit": "adam8bit", "adamw8bit": "adam8bit", "8bitadam": "adam8bit",
    "8bitadamw": "adam8bit", "bnbadam8bit": "adam8bit", "pagedadamw8bit": "adam8bit",
    "sgd": "sgd", "sgdmomentum": "sgd", "momentum": "sgd", "sgdm": "sgd",
    "adafactor": "adafactor",
}


def resolve_optimizer(name: str, field: str = "optimizer") -> OptimizerInfo:
    """Look an optimizer up by name or alias (``adam``, ``adamw-8bit``, ``sgd-momentum``, …)."""
    key = "".join(ch for ch in str(name).lower() if ch.isalnum())
    if key not in _OPTIMIZER_ALIASES:
        raise InputError(field, name, "one of " + ", ".join(OPTIMIZERS))
    return OPTIMIZERS[_OPTIMIZER_ALIASES[key]]


class ModelShape(BaseModel):
    """The transformer shape the activation formula needs."""

    model_config = ConfigDict(frozen=True)

    layers: int = Field(description="Transformer layers L.")
    hidden: int = Field(description="Hidden size h.")
    heads: int = Field(description="Attention heads a.")
    vocab: int | None = Field(default=None, description="Vocabulary size V, when known.")
    source: str = Field(description="Where the shape comes from (given, config, or a guess).")


def guess_shape(params: float) -> ModelShape:
    """Guess (layers, hidden, heads) from a parameter count alone.

    Assumes the GPT-3 proportions (Brown et al. 2020, Table 2.1): N ≈ 12·L·h² (attention 4h² +
    MLP 8h² per layer), h = 128·L, head size 128. Solving gives L = (N / (12·128²))^(1/3).
    Only a guess: give the shape or a config for a real answer.
    """
    layers = max(1, round((params / (12 * ASPECT_RATIO_GUESS**2)) ** (1 / 3)))
    hidden = max(HEAD_DIM_GUESS, round(math.sqrt(params / (12 * layers)) / HEAD_DIM_GUESS)
                 * HEAD_DIM_GUESS)
    return ModelShape(
        layers=layers,
        hidden=hidden,
        heads=hidden // HEAD_DIM_GUESS,
        source=(
            "guessed from N with GPT-3 proportions (N ≈ 12·L·h², h ≈ 128·L, head size 128; "
            "Brown et al. 2020, Table 2.1)"
        ),
    )


def model_state_bytes(
    params: float,
    trainable_params: float,
    optimizer_bytes: float,
    zero: int,
    data_parallel: int,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per device under ZeRO stage ``zero``.

    ``params`` is what one model-parallel rank holds (Ψ / (TP·PP)). Rajbhandari et al. 2020,
    Sec. 5 and Table 1: stage 1 divides the optimizer state by N_d, stage 2 also the gradients,
    stage 3 also the weights.
    """
    weights = WEIGHT_BYTES * params
    gradients = GRADIENT_BYTES * trainable_params
    optimizer = optimizer_bytes * trainable_params
    if zero >= 1:
        optimizer /= data_parallel
    if zero >= 2:
        gradients /= data_parallel
    if zero >= 3:
        weights /= data_parallel
    return weights, gradients, optimizer


def activation_bytes_per_layer(
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    tp: int = 1,
    sp: bool = False,
    recompute: Recompute = "none",
    flash_attention: bool = True,
) -> float:
    """Activation bytes one transformer layer stores for the backward pass (module docstring).

    Korthikanti et al. 2022, eq. 1 (no parallelism), eq. 2 (tensor parallel), Sec. 4.2.2
    (sequence parallel, selective recomputation) and Table 2.
    """
    s, b, h, a, t = seq_len, micro_batch, hidden, heads, tp
    sbh = s * b * h
    scores = 0.0 if (recompute == "selective" or flash_attention) else 5 * a * s / (h * t)
    if sp:
        per_token = 34 / t + scores
    elif t > 1:
        per_token = 10 + 24 / t + scores
    else:
        per_token = 34 + scores
    if recompute == "full":
        return 2 * sbh / (t if sp else 1)
    return sbh * per_token


class MemorySpec(ModelAndLayout):
    """What to size: the model, the optimizer, the parallel layout and the batch."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    params: ParamCount | None = Field(
        default=None,
        description="Total parameters N (e.g. '7B'); may be omitted when a config or preset "
                    "gives the architecture.",
    )
    gpu_count: int = Field(ge=1, le=10_000_000, description="Number of devices, at least 1.")
    gpu: str | None = Field(
        default=None, description="Accelerator name, to answer whether it fits (optional)."
    )
    zero: int = Field(
        default=0, ge=0, le=3,
        description="ZeRO stage 0–3 (0: none; 1: shard optimizer state; 2: + gradients; "
                    "3: + weights) over the data-parallel degree.",
    )
    optimizer: str = Field(
        default="adamw", description="Optimizer: adamw, adam8bit, sgd (with momentum), adafactor."
    )
    trainable_params: ParamCount | None = Field(
        default=None,
        description="Trainable parameters when some are frozen (LoRA, adapters); at most params. "
                    "Frozen parameters have no gradients or optimizer state.",
    )
    active_params: ParamCount | None = Field(
        default=None,
        description="Parameters active per token (MoE), used to guess the layer shape when "
                    "there is no config (the experts do not widen the layers).",
    )
    flash_attention: bool = Field(
        default=True,
        description="FlashAttention-style kernels that never store the s×s attention scores.",
    )
    layers: int | None = Field(default=None, ge=1, description="Transformer layers (optional).")
    hidden: int | None = Field(default=None, ge=1, description="Hidden size (optional).")
    heads: int | None = Field(default=None, ge=1, description="Attention heads (optional).")

    @field_validator("gpu")
    @classmethod
    def _known_gpu(cls, value: str | None) -> str | None:
        return None if value is None else get_accelerator(value).key

    @field_validator("optimizer")
    @classmethod
    def _known_optimizer(cls, value: str) -> str:
        return resolve_optimizer(value).name

    @model_validator(mode="after")
    def _consistent(self) -> MemorySpec:
        arch = self.architecture
        if self.params is None and arch is None:
            raise InputError("params", None, "a parameter count, or a config or preset")
        given = [self.layers, self.hidden, self.heads]
        if any(v is not None for v in given):
            if arch is not None:
                raise InputError("layers/hidden/heads", tuple(given),
                                 "not together with a config or preset (it gives the shape)")
            if any(v is None for v in given):
                raise InputError("layers/hidden/heads", tuple(given),
                                 "all three together, or none (the shape is then guessed from N)")
        if self.hidden is not None and self.heads is not None and self.hidden % self.heads:
            raise InputError("heads", self.heads, f"a divisor of hidden ({self.hidden})")
        check_layout(self.gpu_count, self.tp, self.pp, arch)
        if self.heads is not None and self.heads % self.tp:
            raise InputError("tp", self.tp, f"a divisor of heads ({self.heads})")
        check_seq_len(self.resolved_seq_len, arch)
        if self.trainable_params is not None and self.trainable_params > self.total_params:
            raise InputError("trainable_params", self.trainable_params,
                             f"at most params ({self.total_params:.4g})")
        return self

    @property
    def total_params(self) -> float:
        """The config's exact count when there is one, else ``params``."""
        arch = self.architecture
        if arch is not None:
            return float(count_params(arch).total)
        return float(self.params or 0)

    @property
    def accelerator(self) -> Accelerator | None:
        """The catalog entry for ``gpu``, or None when no device was named."""
        return None if self.gpu is None else get_accelerator(self.gpu)

    @property
    def data_parallel(self) -> int:
        """Data-parallel degree N_d = devices / (TP·PP)."""
        return self.gpu_count // (self.tp * self.pp)

    def shape(self) -> ModelShape:
        """The shape from the config or preset, the one given, or one guessed from N."""
        arch = self.architecture
        if arch is not None:
            return ModelShape(layers=arch.layers, hidden=arch.hidden, heads=arch.heads,
                              vocab=arch.vocab_size, source=arch.source)
        if self.layers is not None and self.hidden is not None and self.heads is not None:
            return ModelShape(layers=self.layers, hidden=self.hidden, heads=self.heads,
                              source="given")
        return guess_shape(self.active_params or self.total_params)


class MemoryBreakdown(BaseModel):
    """Bytes per device by component."""

    model_config = ConfigDict(frozen=True)

    weights: float = Field(description="16-bit weights, bytes per device.")
    gradients: float = Field(description="16-bit gradients, bytes per device.")
    optimizer: float = Field(description="Optimizer state, bytes per device.")
    activations: float = Field(
        description="Stored activations, bytes per device (the loss's fp32 logits included)."
    )
    total: float = Field(description="weights + gradients + optimizer + activations, bytes.")


class MemoryEstimate(BaseModel):
    """Memory per device and whether it fits the named accelerator."""

    model_config = ConfigDict(frozen=True)

    per_gpu_bytes: MemoryBreakdown
    fits: bool | None = Field(description="Whether the total fits the device; None if none named.")
    accelerator: str | None = Field(description="Full accelerator name, if one was named.")
    gpu_memory_bytes: float | None = Field(description="Device memory in bytes, if known.")
    headroom_bytes: float | None = Field(description="Device memory minus total, in bytes.")
    params: float = Field(description="Total parameters N.")
    trainable_params: float = Field(description="Parameters with gradients and optimizer state.")
    gpu_count: int
    zero: int = Field(description="ZeRO stage.")
    tp: int
    pp: int
    sp: bool
    data_parallel: int = Field(description="Data-parallel degree N_d = devices / (TP·PP).")
    optimizer: OptimizerInfo
    shape: ModelShape
    seq_len: int = Field(description="Sequence length in tokens.")
    micro_batch: int = Field(description="Micro-batch size in sequences.")
    recompute: Recompute
    flash_attention: bool
    logits_bytes: float = Field(
        description="Part of the activations: the fp32 logits kept for the loss, bytes per "
                    "device; 0 when the vocabulary is unknown."
    )
    usable_fraction: float = Field(
        description="Share of device memory counted as usable for fits; the rest is left for "
                    "the CUDA context, communication buffers and fragmentation."
    )
    activations_in_flight: int = Field(
        description="Micro-batches whose activations the first pipeline stage holds at once."
    )
    warnings: list[str]


def logits_bytes(seq_len: int, micro_batch: int, vocab: int, tp: int = 1) -> float:
    """Bytes of the fp32 logits kept for the cross-entropy loss: 4·s·b·V / t.

    Not in Korthikanti et al.'s per-layer count; with large vocabularies it rivals a layer's
    activations (Wijmans et al. 2024, "Cut Your Losses in Large-Vocabulary Language Models").
    Vocabulary-parallel over the tensor-parallel ranks, as in Megatron-LM.
    """
    return 4.0 * seq_len * micro_batch * vocab / tp


def estimate_memory(spec: MemorySpec) -> MemoryEstimate:
    """Bytes per device for ``spec``: ZeRO-sharded model states plus activations."""
    opt = resolve_optimizer(spec.optimizer)
    model_parallel = spec.tp * spec.pp
    total_params = spec.total_params
    trainable = spec.trainable_params if spec.trainable_params is not None else total_params
    weights, gradients, optimizer = model_state_bytes(
        total_params / model_parallel, trainable / model_parallel, opt.bytes_per_param,
        spec.zero, spec.data_parallel,
    )
    shape = spec.shape()
    seq_len = spec.resolved_seq_len
    layer = activation_bytes_per_layer(
        seq_len, spec.micro_batch, shape.hidden, shape.heads, spec.tp, spec.sp,
        spec.recompute, spec.flash_attention,
    )
    layers_per_stage = math.ceil(shape.layers / spec.pp)
    in_flight = spec.pp  # 1F1B: the first stage holds pp micro-batches
    activations = layer * layers_per_stage * in_flight
    if spec.recompute == "full":
        # One layer's full activations exist while it is recomputed for its backward pass.
        activations += activation_bytes_per_layer(
            seq_len, spec.micro_batch, shape.hidden, shape.heads, spec.tp, spec.sp,
            "none", spec.flash_attention,
        )
    logits = 0.0 if shape.vocab is None else logits_bytes(
        seq_len, spec.micro_batch, shape.vocab, spec.tp)
    activations += logits
    total = weights + gradients + optimizer + activations

    warnings: list[str] = []
    acc = spec.accelerator
    capacity = acc.memory_bytes if acc is not None else None
    fits = None if capacity is None else total <= USABLE_FRACTION * capacity
    headroom = None if capacity is None else capacity - total
    if capacity and headroom is not None and not fits and headroom >= 0:
        warnings.append(
            f"the total is within {1 - USABLE_FRACTION:.0%} of device memory: too tight, as the "
            "CUDA context, communication buffers and fragmentation need a few GiB."
        )
    if spec.sp and spec.tp == 1:
        warnings.append("sequence parallelism has no effect without tensor parallelism (tp > 1).")
    if spec.architecture is None and shape.source != "given":
        warnings.append("the model shape was guessed from N; give a config or preset (or "
                        "layers, hidden and heads) for exact activations.")
    return MemoryEstimate(
        per_gpu_bytes=MemoryBreakdown(
            weights=weights, gradients=gradients, optimizer=optimizer,
            activations=activations, total=total,
        ),
        fits=fits,
        accelerator=acc.name if acc is not None else None,
        gpu_memory_bytes=capacity,
        headroom_bytes=headroom,
        params=total_params,
        trainable_params=trainable,
        gpu_count=spec.gpu_count,
        zero=spec.zero,
        tp=spec.tp,
        pp=spec.pp,
        sp=spec.sp,
        data_parallel=spec.data_parallel,
        optimizer=opt,
        shape=shape,
        seq_len=seq_len,
        micro_batch=spec.micro_batch,
        recompute=spec.recompute,
        flash_attention=spec.flash_attention,
        logits_bytes=logits,
        usable_fraction=USABLE_FRACTION,
        activations_in_flight=in_flight,
        warnings=warnings,
    )
