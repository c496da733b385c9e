"""The model fields every spec shares: where the model comes from (a config, a Hub id or a
preset, :mod:`.source`), or its size (``params``, ``active_params`` for a mixture of experts) and
optionally its shape (``layers``, ``hidden``, ``heads``) and experts (``experts``,
``experts_per_token``).

The model's size is resolved once per spec (:attr:`ModelFields.size`): the exact counts and shape
of the architecture when there is one, else the given counts with the given or a guessed shape;
a mixture of experts by its counts (active_params below params) gets routed experts that hold
params − active_params and what the active ones use (:func:`.shape.moe_by_counts`), so expert
parallelism has experts to shard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator, Field, PrivateAttr, model_validator

from ..errors import ConfigError, InputError, shown_value
from ..quantities import OptionalCount, bounded_quantity
from .architecture import Architecture, ParamBreakdown
from .param_count import counts_of
from .shape import (
    DEFAULT_EXPERTS_PER_TOKEN,
    LARGEST_VOCAB,
    WIDEST_MLP,
    ExpertsOrigin,
    ModelShape,
    default_experts,
    default_experts_per_token,
    guess_shape,
    moe_by_counts,
    moe_fits_counts,
    routed_params,
    shape_count_range,
    shape_from_architecture,
    shape_given,
)
from .source import COUNT_TOLERANCE, ModelSource, check_counts

__all__ = ["MIN_MODEL_PARAMS", "ModelFields", "ModelParamCount", "ModelSize"]

MIN_MODEL_PARAMS = 1_000
"""The fewest parameters the model of a run may have: a count below it is a size in billions
typed without its suffix (``7`` for 7B), which would price a run of 7 parameters at < $0.01. The
small runs a scaling law is fitted to (:mod:`..scaling.points`) keep the bound of
:data:`..quantities.ParamCount`."""


_PARSE, _RANGE = bounded_quantity(MIN_MODEL_PARAMS, 1e18)


def _a_model_size(value: float) -> float:
    """A positive count below the floor refused with the suffix it lacks; the rest is the range
    check's."""
    if 0 < value < MIN_MODEL_PARAMS:
        raise ValueError(f"must be a number from {MIN_MODEL_PARAMS:g} to 1e+18, a count of "
                         f"parameters, not of billions: give a suffix, {value:g}B = {value:g}e9")
    return value


ModelParamCount = Annotated[float, _PARSE, AfterValidator(_a_model_size), _RANGE]
"""A model's parameter count in [:data:`MIN_MODEL_PARAMS`, 10¹⁸]; accepts ``7e9`` and ``"7B"``."""


@dataclass(frozen=True)
class ModelSize:
    """A spec's model before fine-tuning: exact or given counts and the shape."""

    architecture: Architecture | None
    counts: ParamBreakdown | None
    shape: ModelShape
    total: float
    """All parameters of the model."""
    active: float
    """Parameters one token uses (MoE); ``total`` for a dense model."""
    experts: float
    """Routed-expert parameters, which expert parallelism shards."""


class ModelFields(ModelSource):
    """The model: from a config, a Hub id or a preset, or by its parameter counts."""

    params: ModelParamCount | None = Field(
        default=None,
        description="Total parameters, e.g. '7B' or 7e9. For MoE the total across experts. "
                    "May be omitted when a config or preset gives the architecture.",
    )
    active_params: ModelParamCount | None = Field(
        default=None,
        description="Parameters active per token (MoE); at most params. Omit for dense models.",
    )
    layers: OptionalCount = Field(default=None, ge=1, le=100_000,
                                  description="Decoder layers, with hidden and heads (optional).")
    hidden: OptionalCount = Field(default=None, ge=1, le=10_000_000,
                                  description="Hidden size, with layers and heads (optional).")
    heads: OptionalCount = Field(default=None, ge=1, le=100_000,
                                 description="Attention heads, with layers and hidden "
                                             "(optional).")
    experts: OptionalCount = Field(
        default=None, ge=2, le=1_000_000,
        description="Routed experts per MoE layer. For a MoE by params and active_params; "
                    "default: derived from them (a power of two; the reply says which).")
    experts_per_token: OptionalCount = Field(
        default=None, ge=1, le=1_000_000,
        description="Top-k: routed experts per token. At most experts; default "
                    f"{DEFAULT_EXPERTS_PER_TOKEN}, or derived from experts.")

    _size: tuple[tuple[object, ...], ModelSize] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _model_consistent(self) -> ModelFields:
        arch = self.architecture
        given = (self.layers, self.hidden, self.heads)
        if any(v is not None for v in given):
            if arch is not None:
                raise InputError("layers/hidden/heads", given,
                                 "not together with a config or preset (it gives the shape)")
            if any(v is None for v in given):
                raise InputError("layers/hidden/heads", given,
                                 "all three together, or none (the shape is then guessed from "
                                 "N)")
            if self.hidden % self.heads:  # type: ignore[operator]
                raise InputError("heads", self.heads, f"a divisor of hidden ({self.hidden})")
        if self.params is None and arch is None:
            raise self._no_model()
        check_counts(self, self.params, self.active_params)
        total = float(self.params or 0) if arch is None else self.size.total
        if self.active_params is not None and self.active_params > total:
            raise InputError("active_params", self.active_params,
                             f"at most the total params ({total:.4g})")
        # experts before the shape: without active_params, an MoE's shape (which counts the
        # active ones) would be refused against its total, and the missing count never named
        self._check_experts()
        self._check_shape_counts()
        return self

    def _check_shape_counts(self) -> None:
        """The parameters a token uses (params, or active_params below it) within
        COUNT_TOLERANCE of what the given layers, hidden size and heads count: a shape of
        another size would give activations of that size beside weights of this one."""
        if self.layers is None or self.hidden is None or self.heads is None:
            return
        low, high = shape_count_range(self.layers, self.hidden, self.heads)
        moe = self.active_params is not None and self.active_params < float(self.params or 0)
        name, given = ("active_params", self.active_params) if moe else ("params", self.params)
        if given is not None and not (1 - COUNT_TOLERANCE) * low <= given <= (
                1 + COUNT_TOLERANCE) * high:
            shown = [shown_value(float(f"{n:.3g}")) for n in (low, high)]
            raise InputError(name, given, f"within {COUNT_TOLERANCE:.0%} of what layers "
                                          f"({self.layers}), hidden ({self.hidden}) and heads "
                                          f"({self.heads}) count: {shown[0]} (the Llama layout "
                                          f"assumed) to {shown[1]} (an MLP {WIDEST_MLP} times "
                                          "as wide as the model, a vocabulary of "
                                          f"{LARGEST_VOCAB:,}); or leave layers, hidden and "
                                          f"heads out (the shape is then guessed from {name})")

    def _check_experts(self) -> None:
        """experts and experts_per_token: whole numbers, k ≤ E; with a config or preset, the
        same as its own; else only for a MoE by its counts, which they must be able to hold."""
        e, k = self.experts, self.experts_per_token
        if e is None and k is None:
            return
        if e is not None and k is not None and k > e:
            raise InputError("experts_per_token", k, f"at most experts ({e})")
        arch = self.architecture
        if arch is not None:
            for name, value, own in (("experts", e, arch.experts),
                                     ("experts_per_token", k, arch.experts_per_token)):
                if value is not None and value != own:
                    raise InputError(name, value, f"{own}, as the config or preset gives (or "
                                                  "leave it out)" if own else
                                     "none: the config or preset is dense (no routed experts)")
            return
        total, active = float(self.params or 0), self.active_params
        if active is None or active >= total:
            raise InputError("experts" if e is not None else "experts_per_token",
                             e if e is not None else k,
                             "only for a mixture of experts: with active_params less than params, "
                             "or a config or preset")
        if e is not None and k is not None and not moe_fits_counts(total, active, e, k):
            raise InputError("experts_per_token", k,
                             f"fewer than experts × active_params / params "
                             f"({e * active / total:.3g}): {k} of {e} experts active would use "
                             "more than active_params")
        if e is not None and k is None and default_experts_per_token(total, active, e) < 1:
            raise InputError("experts", e,
                             f"more than params / active_params ({total / active:.3g}): with "
                             f"{e} experts even one per token uses more than active_params")

    def _no_model(self) -> InputError:
        """The error when nothing gives the model (a spec that needs more names it)."""
        return InputError("params", None, "a parameter count, or a model id, config or preset")

    @property
    def size(self) -> ModelSize:
        """The model's counts and shape (computed once, again only if the fields change)."""
        key = (id(self.config), self.model_id, self.preset, self.params, self.active_params,
               self.layers, self.hidden, self.heads, self.experts, self.experts_per_token)
        if self._size is None or self._size[0] != key:
            self._size = (key, self._measure())
        return self._size[1]

    def _measure(self) -> ModelSize:
        arch = self.architecture
        if arch is not None:
            counts = counts_of(arch)
            return ModelSize(architecture=arch, counts=counts, shape=shape_from_architecture(arch),
                             total=float(counts.total), active=float(counts.active),
                             experts=float(counts.routed_experts))
        total = float(self.params or 0)
        active = self.active_params if self.active_params is not None else total
        if self.layers is not None and self.hidden is not None and self.heads is not None:
            shape = shape_given(self.layers, self.hidden, self.heads)
        else:
            shape = guess_shape(active or 1.0)
        experts = 0.0
        if active < total:
            self._check_experts()  # before the experts are derived from them
            e, k, origins = self._experts_of_counts(total, active)
            shape = moe_by_counts(shape, total, active, e, k, origins)
            experts = routed_params(total, active, e, k)
        return ModelSize(architecture=None, counts=None, shape=shape, total=total,
                         active=active, experts=experts)

    def _experts_of_counts(self, total: float, active: float
                           ) -> tuple[int, int, tuple[ExpertsOrigin, ExpertsOrigin]]:
        """E, k and where each comes from, for a MoE by its counts (validated already)."""
        e, k = self.experts, self.experts_per_token
        if e is not None and k is not None:
            return e, k, ("given", "given")
        if e is not None:
            return e, default_experts_per_token(total, active, e), ("given", "derived")
        if k is not None:
            return default_experts(total, active, k), k, ("derived", "given")
        k = DEFAULT_EXPERTS_PER_TOKEN
        return default_experts(total, active, k), k, ("derived", "default")

    def check_parallel(self, tp: int | None, pp: int, ep: int) -> None:
        """The degrees the model's shape allows: tp divides the attention and key-value heads,
        pp at most the layers, ep divides the routed experts (a guessed shape allows any)."""
        shape = self.size.shape
        error = ConfigError if self.architecture is not None else InputError
        if tp is not None and not shape.guessed:
            if shape.heads % tp:
                raise error("tp", tp, f"a divisor of the attention heads ({shape.heads})")
            if shape.kv_heads % tp:
                raise error("tp", tp, f"a divisor of the key-value heads ({shape.kv_heads})")
        if pp > shape.layers and not shape.guessed:
            raise ConfigError("pp", pp, f"at most the number of layers ({shape.layers})")
        if ep > 1:
            if shape.experts == 0:
                raise InputError("ep", ep, "1 for a dense model: expert parallelism needs a "
                                           "mixture of experts (active_params less than params, or "
                                           "a mixture-of-experts config or preset)")
            if shape.experts % ep:
                derived = " derived from params and active_params: give experts" if (
                    shape.experts_origin == "derived") else ""
                raise InputError("ep", ep, f"a divisor of the experts ({shape.experts}"
                                           f"{derived})")
