"""compute-budget: what a training run will cost, and whether the predicted gain is worth it.

The public surface is re-exported here; ``compute_budget.skill`` holds the implementation.
"""

from .skill import *  # noqa: F403
from .skill import __all__ as __all__

__version__ = "0.1.0"
