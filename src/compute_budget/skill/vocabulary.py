"""The ground floor of ``skill``: the words every wing uses, defined once.

Closed sets as ``Literal`` types (recomputation modes, training stacks, MFU conventions, run
kinds, where a value came from), the bounded number types every spec shares (MFU, failure
budget), and the constants of the trade (6 FLOPs per parameter per token, 20 tokens per
parameter, 8 devices per node). Nothing here imports a wing; every wing may import it.
"""

from __future__ import annotations

import functools
import math
import re
import warnings
from collections.abc import Callable
from typing import Annotated, Any, Literal, ParamSpec, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .errors import NotFiniteResultError
from .quantities import NotBool

__all__ = [
    "COMPUTE_OPTIMAL_RATIO",
    "DEFAULT_FAILURE_BUDGET",
    "DEFAULT_RUN_KIND",
    "FLOPS_PER_PARAM_PER_TOKEN",
    "FLOPS_TOLERANCE",
    "GPUS_PER_NODE",
    "HOURS_PER_DAY",
    "LAYOUT_KNOBS",
    "MFU_CONVENTIONS",
    "RECOMPUTE_ORDER",
    "RUN_KINDS",
    "SECONDS_PER_HOUR",
    "STACKS",
    "DefaultUsed",
    "FailureBudget",
    "FiniteResult",
    "Mfu",
    "MfuConvention",
    "Origin",
    "Recompute",
    "RunKind",
    "Stack",
    "flops_6nd",
    "flops_agree",
    "normalize_name",
    "renamed_arguments",
    "starts_from_a_model",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")

# --- the arithmetic of training -----------------------------------------------------------

FLOPS_PER_PARAM_PER_TOKEN = 6.0
"""2 forward + 4 backward FLOPs per parameter per token (Kaplan et al. 2020, Table 1)."""
COMPUTE_OPTIMAL_RATIO = 20.0
"""Tokens per parameter at the compute optimum (Hoffmann et al. 2022, "Chinchilla")."""


def flops_6nd(params: float, tokens: float) -> float:
    """Training compute C = 6·N·D in FLOPs (Kaplan et al. 2020), unchecked: for numbers a spec
    or a validated call already checked. Users call ``train_flops``, which checks them."""
    return FLOPS_PER_PARAM_PER_TOKEN * params * tokens


FLOPS_TOLERANCE = 0.01
"""How far a compute budget given beside the model and tokens may be from their 6·N·D: the
three must describe one run (1% lets a budget rounded to three figures through)."""


def flops_agree(flops: float, params: float, tokens: float) -> bool:
    """True when ``flops`` is 6·params·tokens within :data:`FLOPS_TOLERANCE`."""
    return abs(flops_6nd(params, tokens) / flops - 1) <= FLOPS_TOLERANCE


SECONDS_PER_HOUR = 3600.0
HOURS_PER_DAY = 24.0
GPUS_PER_NODE = 8
"""Devices per node (an HGX/DGX board; tensor parallelism stays within one)."""

# --- the layout -------------------------------------------------------------------------

Recompute = Literal["none", "selective", "full"]
"""Activation recomputation: none, selective (attention scores) or full (whole layers)."""
RECOMPUTE_ORDER: tuple[Recompute, ...] = get_args(Recompute)
Stack = Literal["hf", "megatron"]
"""The training stack whose kept tensors the activation formula follows."""
STACKS: tuple[Stack, ...] = get_args(Stack)
LAYOUT_KNOBS = ("zero", "tp", "pp", "sp", "ep", "recompute", "micro_batch", "offload")
"""The layout fields the search may choose when the user leaves them unset."""
LONG_CONTEXT = 32_768
"""Tokens from which a sequence is said to lay its run out when its layout needs recomputation,
fits nowhere, or holds more activations than model states per device: long-context training
splits such sequences over devices (context parallelism: Llama 3 at 128K, Dubey et al. 2024,
Sec. 3.3.2), which the layout search does not model, so the replies say so
(``context_parallel_unmodelled``)."""

# --- MFU and the failure budget ---------------------------------------------------------

MfuConvention = Literal["6n", "causal", "full"]
"""How a measured MFU or achieved TFLOP/s counted model FLOPs per token: ``6n`` 6·N (Kaplan et
al. 2020; published end-to-end figures, this package's priors); ``causal`` 6·N + causal attention
6·L·H·Q·T (Megatron-LM's ``num_floating_point_operations``); ``full`` 6·N + 12·L·H·Q·T, attention
over all T keys (PaLM App. B, nanoGPT's ``estimate_mfu``, torchtitan's MFU)."""
MFU_CONVENTIONS: tuple[MfuConvention, ...] = get_args(MfuConvention)

Mfu = Annotated[
    float,
    Field(ge=1e-4, le=1, allow_inf_nan=False,
          description="Model FLOPs utilisation as a fraction of the dense peak, in [0.0001, 1]."),
    NotBool,
]
"""Model FLOPs utilisation: the share of the dense peak a run turns into model FLOPs."""

DEFAULT_FAILURE_BUDGET = 1.5
"""Multiplier on nominal cost for failures and re-runs (the stage-3 compute-budget skill)."""
FailureBudget = Annotated[
    float,
    Field(ge=1, le=10, allow_inf_nan=False,
          description="Multiplier on nominal cost for failures and re-runs, in [1, 10]; 1.5 "
                      "(one partial re-run) by default."),
    NotBool,
]

# --- the kind of run --------------------------------------------------------------------

RunKind = Literal["pretrain", "continued-pretrain", "fine-tune", "ablation"]
"""``pretrain`` (the default) trains a model from scratch; ``continued-pretrain`` and
``fine-tune`` start from a given model (no from-scratch alternatives); an ``ablation``
compares two settings, so its uncertainty shrinks with more seeds or a larger evaluation set."""
RUN_KINDS: tuple[RunKind, ...] = get_args(RunKind)
DEFAULT_RUN_KIND: RunKind = "pretrain"


def starts_from_a_model(kind: RunKind) -> bool:
    """True for runs that continue from an existing model (no from-scratch alternatives)."""
    return kind in ("continued-pretrain", "fine-tune")


# --- where a value came from ------------------------------------------------------------

Origin = Literal["user", "catalog", "config", "default"]
"""Where a value an estimate used came from: given by the user, the accelerator catalog (or
another packaged, sourced table), the model's config or preset, or a documented default."""


class DefaultUsed(BaseModel):
    """One input an estimate filled in itself: which field, the value it took, and on what
    basis (a code the reply words)."""

    model_config = ConfigDict(frozen=True)

    field: str = Field(description="The argument the value stands for.")
    value: float | str | None = Field(description="The value taken; None when unknown.")
    basis: str = Field(description="Why this value: a code (prior, catalog, device_default, "
                                   "default, searched, not_searched, unknown).")


def renamed_arguments(**renamed: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """A function whose arguments ``old=new`` were renamed: the old keyword still works for one
    release, with a DeprecationWarning (as ``skill.RENAMED`` keeps old public names)."""
    def wrap(function: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(function)
        def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for old, new in renamed.items():
                if old in kwargs:
                    warnings.warn(f"{function.__name__}'s argument {old} is renamed {new}; the "
                                  "old name goes in the next release", DeprecationWarning,
                                  stacklevel=2)
                    kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return call

    return wrap


def normalize_name(name: str) -> str:
    """Lower-case, drop punctuation and spaces: ``'A100 80GB SXM'`` → ``'a10080gbsxm'``."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


_LEAVES = (int, str, bool, type(None))


def _first_not_finite(value: Any, root: bool = False) -> list[str | int] | None:
    """The keys, innermost first, down to the first infinite or NaN number in ``value``; None
    when every number is finite. (Paths are built only for the failure: results are checked on
    every estimate, and most of their values are leaves.)"""
    if isinstance(value, float):
        return None if math.isfinite(value) else []
    if isinstance(value, _LEAVES) or (isinstance(value, FiniteResult) and not root):
        return None  # a nested result checked itself when it was built
    items: Any
    if isinstance(value, BaseModel):
        items = value.__dict__.items()
    elif isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(item, float):
            if not math.isfinite(item):
                return [key]
        elif not isinstance(item, _LEAVES):
            found = _first_not_finite(item)
            if found is not None:
                found.append(key)
                return found
    return None


def _path(name: str, keys: list[str | int]) -> str:
    return name + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in reversed(keys))


class FiniteResult(BaseModel):
    """A result every door may show: building one with an infinite or NaN number anywhere in
    it raises :class:`~.errors.NotFiniteResultError` naming where (the one guard)."""

    @model_validator(mode="after")
    def _all_finite(self) -> FiniteResult:
        found = _first_not_finite(self, root=True)
        if found is not None:
            raise NotFiniteResultError(_path(type(self).__name__, found))
        return self
