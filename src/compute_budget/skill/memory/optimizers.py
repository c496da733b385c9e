"""Optimizers and the bytes of state they keep per trainable parameter."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError

__all__ = ["OPTIMIZERS", "OptimizerInfo", "OptimizerName", "resolve_optimizer"]

OptimizerName = Literal["adamw", "adam8bit", "sgd", "adafactor"]

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
