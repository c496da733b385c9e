"""The model fields every spec shares: where the model comes from (a config, a Hub id or a
preset, :mod:`.source`), or its size (``params``, ``active_params`` for a mixture of experts) and
optionally its shape (``layers``, ``hidden``, ``heads``).

The model's size is resolved once per spec (:attr:`ModelFields.size`): the exact counts and shape
of the architecture when there is one, else the given counts with the given or a guessed shape.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, PrivateAttr, model_validator

from ..errors import ConfigError, InputError
from ..quantities import OptionalCount, ParamCount
from .architecture import Architecture, ParamBreakdown
from .param_count import counts_of
from .shape import ModelShape, guess_shape, shape_from_architecture, shape_given
from .source import ModelSource

__all__ = ["ModelFields", "ModelSize"]


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

    params: ParamCount | None = Field(
        default=None,
        description="Total parameters N (e.g. 7e9 or '7B'); for MoE the total across experts. "
                    "May be omitted when a config or preset gives the architecture.",
    )
    active_params: ParamCount | None = Field(
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
        total = self.size.total
        if self.active_params is not None and self.active_params > total:
            raise InputError("active_params", self.active_params,
                             f"at most the total params ({total:.4g})")
        return self

    def _no_model(self) -> InputError:
        """The error when nothing gives the model (a spec that needs more names it)."""
        return InputError("params", None, "a parameter count, or a model id, config or preset")

    @property
    def size(self) -> ModelSize:
        """The model's counts and shape (computed once, again only if the fields change)."""
        key = (id(self.config), self.model_id, self.preset, self.params, self.active_params,
               self.layers, self.hidden, self.heads)
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
        return ModelSize(architecture=None, counts=None, shape=shape, total=total,
                         active=active, experts=0.0)

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
                                           "mixture-of-experts config or preset")
            if shape.experts % ep:
                raise InputError("ep", ep, f"a divisor of the experts ({shape.experts})")
