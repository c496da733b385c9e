"""One definition of the model and its layout, shared by the run spec and the memory spec.

Every layout knob (ZeRO stage, tensor, pipeline, sequence and expert parallelism, recomputation,
micro-batch, optimizer offload) is ``None`` until the user sets it: a value a client filled in
from a schema default is not a value the user chose, and the layout search
(:mod:`.layout`) varies exactly the knobs left at ``None``. The model is resolved once per spec
(:attr:`ModelAndLayout.model`): the config is read when the spec is validated and the counts,
the shape, the LoRA adapters and the quantized weights are derived once from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, PrivateAttr, field_validator, model_validator

from ..errors import ConfigError, InputError
from ..hardware.catalog import Accelerator, AcceleratorKey, get_accelerator
from ..model.architecture import Architecture, ParamBreakdown
from ..model.param_count import counts_of
from ..model.shape import ModelShape, guess_shape, shape_from_architecture, shape_given
from ..model.source import ModelSource, check_seq_len, default_seq_len
from ..quantities import Count, OptionalCount, ParamCount
from ..vocabulary import GPUS_PER_NODE, Recompute, Stack
from .lora import LoraTargets, WeightsBits, decoder_linear_weights, lora_params
from .optimizers import resolve_optimizer

__all__ = ["ModelAndLayout", "ResolvedModel"]



@dataclass(frozen=True)
class ResolvedModel:
    """A spec's model, resolved once: exact or given counts, the shape, adapters, quantization."""

    architecture: Architecture | None
    counts: ParamBreakdown | None
    shape: ModelShape
    total: float
    """All parameters of the base model."""
    active: float
    """Parameters one token uses (MoE); ``total`` for a dense model."""
    trainable: float
    """Parameters with gradients and optimizer state (the LoRA adapters, when LoRA)."""
    adapters: float
    """LoRA parameters added beside the frozen base (0 without LoRA)."""
    experts: float
    """Routed-expert parameters, which expert parallelism shards."""
    quantized: float
    """Frozen parameters stored at ``weights_bits`` (0 at 16 bits)."""
    weights_bits: int
    lora_rank: int | None
    lora_targets: LoraTargets | None


class ModelAndLayout(ModelSource):
    """The model (by size, config or preset), how it is fine-tuned, and its layout."""

    params: ParamCount | None = Field(
        default=None,
        description="Total parameters N (e.g. 7e9 or '7B'); for MoE the total across experts. "
                    "May be omitted when a config or preset gives the architecture.",
    )
    active_params: ParamCount | None = Field(
        default=None,
        description="Parameters active per token (MoE); at most params. Omit for dense models.",
    )
    trainable_params: ParamCount | None = Field(
        default=None,
        description="Trainable parameters (adapters; the rest frozen). At most params. "
                    "Frozen weights skip their weight gradients and hold no optimizer state. "
                    "For LoRA give lora_rank instead.",
    )
    lora_rank: OptionalCount = Field(
        default=None, ge=1, le=65536,
        description="LoRA rank r. The frozen base gets r·(d_in + d_out) trainable parameters "
                    "per adapted linear layer (counted from the architecture or guessed shape).",
    )
    lora_targets: LoraTargets | None = Field(
        default=None,
        description="Layers LoRA adapts: all-linear (every decoder linear layer, QLoRA's "
                    "choice; the default) or attention (the attention projections).",
    )
    weights_bits: WeightsBits | None = Field(
        default=None,
        description="Storage of the frozen base weights: 16 (default), 8 (LLM.int8) or 4 "
                    "(QLoRA's NF4); needs a frozen base (lora_rank or trainable_params).",
    )
    layers: OptionalCount = Field(default=None, ge=1, le=100_000,
                               description="Decoder layers, with hidden and heads (optional).")
    hidden: OptionalCount = Field(default=None, ge=1, le=10_000_000,
                               description="Hidden size, with layers and heads (optional).")
    heads: OptionalCount = Field(default=None, ge=1, le=100_000,
                              description="Attention heads, with layers and hidden (optional).")
    gpu: AcceleratorKey | None = Field(
        default=None, description="Accelerator name from the catalog, e.g. 'h100', 'a100-80gb'."
    )
    gpu_count: Count = Field(ge=1, le=10_000_000, description="Number of devices, at least 1.")
    seq_len: OptionalCount = Field(
        default=None, ge=1, le=10_000_000,
        description="Training sequence length in tokens (default 4096, or a smaller learned "
                    "position table).",
    )
    micro_batch: OptionalCount = Field(
        default=None, ge=1, le=1_000_000,
        description="Micro-batch size in sequences per device (default 1).",
    )
    zero: OptionalCount = Field(
        default=None, ge=0, le=3,
        description="ZeRO stage 0–3 over the data-parallel degree (1: optimizer state; 2: + "
                    "gradients; 3: + weights). Default: searched.",
    )
    tp: OptionalCount = Field(default=None, ge=1, le=1024,
                           description="Tensor-parallel degree. Default: searched (1–8).")
    pp: OptionalCount = Field(default=None, ge=1, le=1024,
                           description="Pipeline-parallel degree. Default: searched.")
    sp: bool | None = Field(
        default=None,
        description="Sequence parallelism (needs tp > 1). Default: on whenever tp > 1.",
    )
    ep: OptionalCount = Field(
        default=None, ge=1, le=65536,
        description="Expert-parallel degree for MoE: shards the routed experts' weights, "
                    "gradients and optimizer state (default 1).",
    )
    recompute: Recompute | None = Field(
        default=None,
        description="Activation recomputation: none, selective or full. Default: searched.",
    )
    offload: bool | None = Field(
        default=None,
        description="Optimizer state in CPU memory (ZeRO-Offload; needs ZeRO ≥ 1). Default: "
                    "only as a last resort.",
    )
    optimizer: str | None = Field(
        default=None, description="Optimizer: adamw (default), adam8bit, sgd, adafactor."
    )
    stack: Stack | None = Field(
        default=None,
        description="Training stack for activation memory: hf (transformers + SDPA) or "
                    "megatron (fused kernels, Korthikanti et al. 2022). Default: megatron for "
                    "full training on more than 8 devices, else hf.",
    )
    flash_attention: bool = Field(
        default=True,
        description="FlashAttention-style kernels that never store the s×s attention scores.",
    )

    _resolved: tuple[tuple[object, ...], ResolvedModel] | None = PrivateAttr(default=None)

    @field_validator("optimizer")
    @classmethod
    def _known_optimizer(cls, value: str | None) -> str | None:
        return None if value is None else resolve_optimizer(value).name

    @model_validator(mode="after")
    def _consistent(self) -> ModelAndLayout:
        arch = self.architecture
        self._check_shape(arch)
        if self.lora_rank is not None and self.params is None and arch is None:
            raise InputError("lora_rank", self.lora_rank,
                             "LoRA needs the model's shape: a model id, config or preset, or "
                             "params (to guess it from)")
        if self.params is None and arch is None:
            raise InputError("params", None, "a parameter count, or a model id, config or preset")
        total = self.model.total
        if self.active_params is not None and self.active_params > total:
            raise InputError("active_params", self.active_params,
                             f"at most the total params ({total:.4g})")
        if self.trainable_params is not None and self.trainable_params > total:
            raise InputError("trainable_params", self.trainable_params,
                             f"at most the total params ({total:.4g})")
        self._check_fine_tuning(total)
        if self.offload and self.zero == 0:
            raise InputError("offload", True,
                             "not with zero 0: ZeRO-Offload moves the sharded optimizer state, "
                             "so give zero 1, 2 or 3 (or leave zero unset)")
        self._check_layout(arch)
        check_seq_len(self.resolved_seq_len, arch)
        return self

    def _check_shape(self, arch: Architecture | None) -> None:
        given = (self.layers, self.hidden, self.heads)
        if all(v is None for v in given):
            return
        if arch is not None:
            raise InputError("layers/hidden/heads", given,
                             "not together with a config or preset (it gives the shape)")
        if any(v is None for v in given):
            raise InputError("layers/hidden/heads", given,
                             "all three together, or none (the shape is then guessed from N)")
        if self.hidden % self.heads:  # type: ignore[operator]
            raise InputError("heads", self.heads, f"a divisor of hidden ({self.hidden})")

    def _check_fine_tuning(self, total: float) -> None:
        if self.lora_rank is not None:
            if self.trainable_params is not None:
                raise InputError("trainable_params", self.trainable_params,
                                 "not together with lora_rank (LoRA's trainable parameters "
                                 "are counted from the rank)")
            hidden = self.model.shape.hidden
            if self.lora_rank > hidden:
                raise InputError("lora_rank", self.lora_rank,
                                 f"a rank from 1 to the hidden size ({hidden})")
        elif self.lora_targets is not None:
            raise InputError("lora_targets", self.lora_targets, "only together with lora_rank")
        frozen = self.lora_rank is not None or (
            self.trainable_params is not None and self.trainable_params < total)
        if self.weights_bits is not None and self.weights_bits < 16 and not frozen:
            raise InputError("weights_bits", self.weights_bits,
                             "16 for a full fine-tune; 4 or 8 bits only for a frozen base "
                             "(give lora_rank or trainable_params)")

    def _check_layout(self, arch: Architecture | None) -> None:
        tp, pp, ep, n = self.tp or 1, self.pp or 1, self.ep or 1, self.gpu_count
        shape = self.model.shape
        if tp > n:
            raise InputError("tp", tp, f"at most gpu_count ({n})")
        if pp > n:
            raise InputError("pp", pp, f"at most gpu_count ({n})")
        if self.tp is not None and n % tp:
            raise InputError("tp", tp, f"a divisor of gpu_count ({n})")
        if self.pp is not None and n % pp:
            raise InputError("pp", pp, f"a divisor of gpu_count ({n})")
        if n % (tp * pp):
            raise InputError("gpu_count", n,
                             f"a multiple of tp × pp = {tp * pp} (data parallel = devices / "
                             "(tp·pp))")
        if tp > 1 and self.weights_bits is not None and self.weights_bits < 16:
            raise InputError("tp", tp, "1 with a 4- or 8-bit frozen base: quantized weights "
                                       "are not split across tensor-parallel ranks")
        if self.tp is not None and not shape.guessed:
            error = ConfigError if arch is not None else InputError
            if shape.heads % tp:
                raise error("tp", tp, f"a divisor of the attention heads ({shape.heads})")
            if shape.kv_heads % tp:
                raise error("tp", tp, f"a divisor of the key-value heads ({shape.kv_heads})")
        if pp > shape.layers and not shape.guessed:
            raise ConfigError("pp", pp, f"at most the number of layers ({shape.layers})")
        if ep > 1:
            if shape.experts == 0:
                raise InputError("ep", ep, "1 for a dense model: expert parallelism needs a "
                                           "mixture-of-experts config or preset")
            if shape.experts % ep:
                raise InputError("ep", ep, f"a divisor of the experts ({shape.experts})")
            if (n // (tp * pp)) % ep:
                raise InputError("ep", ep, f"a divisor of the data-parallel degree "
                                           f"({n // (tp * pp)} = devices / (tp·pp))")

    # --- the model, resolved once ----------------------------------------------------------

    @property
    def resolved_seq_len(self) -> int:
        """The sequence length given, or the default for the architecture."""
        return self.seq_len if self.seq_len is not None else default_seq_len(self.architecture)

    @property
    def resolved_stack(self) -> Stack:
        """The training stack given; else ``megatron`` for a run that trains every weight on
        more than one node (pre-training runs use Megatron-style stacks), ``hf`` otherwise
        (fine-tuning and single-node runs: what Hugging Face tools run)."""
        if self.stack is not None:
            return self.stack
        multi_node = self.gpu_count > GPUS_PER_NODE
        return "megatron" if multi_node and self.model.trainable >= self.model.total else "hf"

    @property
    def accelerator(self) -> Accelerator | None:
        """The catalog entry for ``gpu``; None when no device was named."""
        return None if self.gpu is None else get_accelerator(self.gpu)

    @property
    def model(self) -> ResolvedModel:
        """The model resolved from the fields (computed once, again only if they change)."""
        key = (id(self.config), self.preset, self.params, self.active_params,
               self.trainable_params, self.lora_rank, self.lora_targets, self.weights_bits,
               self.layers, self.hidden, self.heads)
        if self._resolved is None or self._resolved[0] != key:
            self._resolved = (key, self._resolve())
        return self._resolved[1]

    @property
    def total_params(self) -> float:
        """The config's exact count when there is one, else ``params``."""
        return self.model.total

    def _resolve(self) -> ResolvedModel:
        arch = self.architecture
        counts = None if arch is None else counts_of(arch)
        if counts is not None and arch is not None:
            total, active = float(counts.total), float(counts.active)
            shape = shape_from_architecture(arch)
            experts = float(counts.routed_experts)
        else:
            total = float(self.params or 0)
            active = self.active_params if self.active_params is not None else total
            if self.layers is not None and self.hidden is not None and self.heads is not None:
                shape = shape_given(self.layers, self.hidden, self.heads)
            else:
                shape = guess_shape(active or 1.0)
            experts = 0.0
        adapters = 0.0
        targets: LoraTargets | None = None
        if self.lora_rank is not None:
            targets = self.lora_targets or "all-linear"
            adapters = float(lora_params(shape, self.lora_rank, targets))
            trainable = adapters
        elif self.trainable_params is not None:
            trainable = self.trainable_params
        else:
            trainable = total
        bits = self.weights_bits or 16
        quantized = 0.0
        if bits < 16:
            quantized = min(float(decoder_linear_weights(shape)), total)
        return ResolvedModel(
            architecture=arch, counts=counts, shape=shape, total=total, active=active,
            trainable=trainable, adapters=adapters, experts=experts, quantized=quantized,
            weights_bits=bits, lora_rank=self.lora_rank, lora_targets=targets,
        )

