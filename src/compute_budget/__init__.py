"""compute-budget: what a training run will cost, and whether the predicted gain is worth it.

The public surface is re-exported here; ``compute_budget.skill`` holds the implementation.
Names load on first use (see ``compute_budget.skill``), so importing the package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import skill as _skill

if TYPE_CHECKING:
    from .skill import *  # noqa: F403

__version__ = "0.1.0"
__all__ = list(_skill.__all__)


def __getattr__(name: str) -> Any:
    """``compute_budget.RunSpec`` is ``compute_budget.skill.RunSpec``, imported on first use."""
    if name in _skill.__all__ or name in _skill.RENAMED:
        return getattr(_skill, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
