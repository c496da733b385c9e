"""The model and its layout, as field groups that every spec composes.

- :class:`FineTuningFields`: which weights train (adapters, LoRA, a quantized frozen base);
- :class:`LayoutFields`: how a training step is laid out (sequence, micro-batch, ZeRO stage,
  tensor, pipeline, sequence and expert parallelism, recomputation, offload, optimizer, stack);
- :class:`ModelAndLayout`: the model fields (:mod:`..model.fields`) with both groups, and the
  checks that need no device count (the plan spec uses it as it is);
- :class:`OnDevices`: the same on ``gpu_count`` devices, with the checks that need the count
  (the memory spec and the run spec build on it).

Every layout knob is ``None`` until the user sets it: a value a client filled in from a schema
default is not a value the user chose, and the layout search (:mod:`.layout`) varies exactly the
knobs left at ``None``. The model is resolved once per spec (:attr:`ModelAndLayout.model`): the
config is read when the spec is validated, and the counts, the shape, the LoRA adapters and the
quantized weights are derived once from it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from ..errors import InputError
from ..hardware.catalog import GPU_DESCRIPTION, Accelerator, AcceleratorKey, get_accelerator
from ..model.architecture import Architecture, ParamBreakdown
from ..model.fields import ModelFields
from ..model.shape import ModelShape
from ..model.source import check_seq_len, default_seq_len
from ..quantities import DeviceCount, NotBool, OptionalCount, ParamCount
from ..vocabulary import GPUS_PER_NODE, Recompute, Stack
from .activations import AttentionCounted, attention_counted
from .lora import LoraTargets, WeightsBits, lora_params, quantized_weights
from .optimizers import resolve_optimizer

HostRamGib = Annotated[float, Field(ge=1.0, le=1_000_000.0, allow_inf_nan=False), NotBool]
"""GiB of CPU RAM per device: 1 to 1,000,000."""


def _field_values(obj: object) -> tuple[object, ...]:
    """A dataclass's field values, not copied (``dataclasses.astuple`` deep-copies)."""
    return tuple(getattr(obj, f.name) for f in fields(obj))  # type: ignore[arg-type]


__all__ = ["FineTuningFields", "LayoutFields", "ModelAndLayout", "OnDevices", "ResolvedModel"]

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

    def __hash__(self) -> int:
        """Hashed once: the layout search's caches key on the model thousands of times, and its
        shape and counts are pydantic models whose hash walks every field."""
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash(_field_values(self))
            object.__setattr__(self, "_hash", cached)
        return cached

    @property
    def frozen(self) -> bool:
        """Whether some weights are frozen (LoRA adapters on a base, or trainable < total): the
        run starts from a trained model and its frozen base may be streamed from the host."""
        return self.trainable < self.total or self.adapters > 0


class FineTuningFields(BaseModel):
    """Which weights train: all, some (adapters), or LoRA adapters on a frozen, maybe quantized,
    base."""

    trainable_params: ParamCount | None = Field(
        default=None,
        description="Trainable parameters; the rest frozen (adapters). At most params. "
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


class LayoutFields(BaseModel):
    """How one training step is laid out; every knob left unset is searched."""

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
        description="Expert-parallel degree for MoE: shards the routed experts' states. "
                    "Default: searched (1 on the hf stack).",
    )
    recompute: Recompute | None = Field(
        default=None,
        description="Activation recomputation: none, selective or full. Default: searched.",
    )
    offload: bool | None = Field(
        default=None,
        description="CPU offload: optimizer state (ZeRO ≥ 1), then at ZeRO 3 a frozen base's "
                    "weights, streamed per layer. Default: a last resort (between PCIe cards: if "
                    "cheaper).",
    )
    host_ram_gib: HostRamGib | None = Field(
        default=None,
        description="CPU RAM per device in GiB that offload may use: a machine's RAM over its "
                    "devices (128 GiB for 2 GPUs: 64). Default: the device's usual host (e.g. a "
                    "DGX H100's 2 TiB over 8; a desktop's 96 GiB over 2 for GeForce and RTX "
                    "workstation cards); cloud machines often give less.",
    )
    optimizer: str | None = Field(
        default=None, description="Optimizer: adamw (default), adam8bit, sgd, adafactor."
    )
    stack: Stack | None = Field(
        default=None,
        description="Training stack for activation memory: hf (Hugging Face transformers) or "
                    "megatron (fused kernels, Korthikanti et al. 2022). Default: megatron for "
                    "full training on more than 8 devices, else hf.",
    )
    flash_attention: bool | None = Field(
        default=None,
        description="Attention kernels that never store the s×s attention scores (SDPA's, "
                    "FlashAttention); false: eager attention, which stores them. Default: on, "
                    "except on the hf stack for a family whose transformers default is eager "
                    "(Gemma 2).",
    )

    @field_validator("optimizer")
    @classmethod
    def _known_optimizer(cls, value: str | None) -> str | None:
        return None if value is None else resolve_optimizer(value).name

    @property
    def count_step(self) -> int:
        """Every device count must be a multiple of this: the pinned tp·pp·ep."""
        return (self.tp or 1) * (self.pp or 1) * (self.ep or 1)


class ModelAndLayout(ModelFields, FineTuningFields, LayoutFields):
    """The model (by size, config or preset), how it is fine-tuned, and its layout."""

    _resolved: tuple[tuple[object, ...], ResolvedModel] | None = PrivateAttr(default=None)

    def _no_model(self) -> InputError:
        if self.lora_rank is not None:
            return InputError("lora_rank", self.lora_rank,
                              "LoRA needs the model's shape: a model id, config or preset, or "
                              "params (to guess it from)")
        return super()._no_model()

    @model_validator(mode="after")
    def _fine_tuning_consistent(self) -> ModelAndLayout:
        total = self.size.total
        if self.trainable_params is not None and self.trainable_params > total:
            raise InputError("trainable_params", self.trainable_params,
                             f"at most the total params ({total:.4g})")
        self._check_fine_tuning(total)
        if self.offload and self.zero == 0:
            raise InputError("offload", True,
                             "not with zero 0: ZeRO-Offload moves the sharded optimizer state, "
                             "so give zero 1, 2 or 3 (or leave zero unset)")
        if self.sp and self.tp == 1:
            raise InputError("sp", True, "only with tp above 1: sequence parallelism splits the "
                                         "activations over the tensor-parallel ranks (give tp 2 "
                                         "or more, or leave sp out)")
        self.check_parallel(self.tp, self.pp or 1, self.ep or 1)
        check_seq_len(self.resolved_seq_len, self.architecture)
        return self

    def _check_fine_tuning(self, total: float) -> None:
        if self.lora_rank is not None:
            if self.trainable_params is not None:
                raise InputError("trainable_params", self.trainable_params,
                                 "not together with lora_rank (LoRA's trainable parameters "
                                 "are counted from the rank)")
            hidden = self.size.shape.hidden
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
        if (self.tp or 1) > 1 and self.weights_bits is not None and self.weights_bits < 16:
            raise InputError("tp", self.tp, "1 with a 4- or 8-bit frozen base: quantized "
                                            "weights are not split across tensor-parallel ranks")

    def check_devices(self, gpu_count: int) -> None:
        """The layout on ``gpu_count`` devices: tp and pp divide it, and ep the data-parallel
        degree devices / (tp·pp)."""
        tp, pp, ep, n = self.tp or 1, self.pp or 1, self.ep or 1, gpu_count
        for name, degree, given in (("tp", tp, self.tp), ("pp", pp, self.pp)):
            if degree > n:
                raise InputError(name, degree, f"at most gpu_count ({n})")
            if given is not None and n % degree:
                raise InputError(name, degree, f"a divisor of gpu_count ({n})")
        if n % (tp * pp):
            raise InputError("gpu_count", n,
                             f"a multiple of tp × pp = {tp * pp} (data parallel = devices / "
                             "(tp·pp))")
        if ep > 1 and (n // (tp * pp)) % ep:
            raise InputError("ep", ep, f"a divisor of the data-parallel degree "
                                       f"({n // (tp * pp)} = devices / (tp·pp))")

    # --- the model, resolved once ----------------------------------------------------------

    @property
    def resolved_seq_len(self) -> int:
        """The sequence length given, or the default for the architecture."""
        return self.seq_len if self.seq_len is not None else default_seq_len(self.architecture)

    def stack_on(self, gpu_count: int) -> Stack:
        """The training stack given; else ``megatron`` for a run that trains every weight on
        more than one node (pre-training runs use Megatron-style stacks), ``hf`` otherwise
        (fine-tuning and single-node runs: what Hugging Face tools run)."""
        if self.stack is not None:
            return self.stack
        multi_node = gpu_count > GPUS_PER_NODE
        return "megatron" if multi_node and self.model.trainable >= self.model.total else "hf"

    @property
    def model(self) -> ResolvedModel:
        """The model resolved from the fields (computed once, again only if they change)."""
        key = (id(self.config), self.model_id, self.preset, self.params, self.active_params,
               self.trainable_params, self.lora_rank, self.lora_targets, self.weights_bits,
               self.layers, self.hidden, self.heads, self.experts, self.experts_per_token)
        if self._resolved is None or self._resolved[0] != key:
            self._resolved = (key, self._resolve())
        return self._resolved[1]

    @property
    def total_params(self) -> float:
        """The config's exact count when there is one, else ``params``."""
        return self.size.total

    def _resolve(self) -> ResolvedModel:
        size = self.size
        adapters = 0.0
        targets: LoraTargets | None = None
        if self.lora_rank is not None:
            targets = self.lora_targets or "all-linear"
            adapters = float(lora_params(size.shape, self.lora_rank, targets))
            trainable = adapters
        elif self.trainable_params is not None:
            trainable = self.trainable_params
        else:
            trainable = size.total
        bits = self.weights_bits or 16
        quantized = 0.0
        if bits < 16:
            quantized = quantized_weights(size.shape, size.total)
        return ResolvedModel(
            architecture=size.architecture, counts=size.counts, shape=size.shape,
            total=size.total, active=size.active, trainable=trainable, adapters=adapters,
            experts=size.experts, quantized=quantized, weights_bits=bits,
            lora_rank=self.lora_rank, lora_targets=targets,
        )


class OnDevices(ModelAndLayout):
    """The model and its layout on ``gpu_count`` devices of type ``gpu``."""

    gpu: AcceleratorKey | None = Field(default=None, description=GPU_DESCRIPTION)
    gpu_count: DeviceCount = Field(description="Number of devices, at least 1.")

    @model_validator(mode="after")
    def _devices_consistent(self) -> OnDevices:
        self.check_devices(self.gpu_count)
        return self

    @property
    def accelerator(self) -> Accelerator | None:
        """The catalog entry for ``gpu``; None when no device was named."""
        return None if self.gpu is None else get_accelerator(self.gpu)

    @property
    def resolved_stack(self) -> Stack:
        """The training stack given, or the default for this run (:meth:`stack_on`)."""
        return self.stack_on(self.gpu_count)

    @property
    def resolved_attention(self) -> AttentionCounted:
        """The attention counted: flash_attention as given, else the stack's and the family's
        default (:func:`~.activations.attention_counted`)."""
        return attention_counted(self.flash_attention, self.resolved_stack, self.model.shape)
