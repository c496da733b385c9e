"""``compute-budget probe``: one minute of the real model on the user's own device (issue 20).

:func:`run_probe` builds the model of a Hugging Face config at full width with one and with two
decoder layers (random weights, nothing downloaded), times a few training steps of each on the
local device (CUDA, ROCm, MPS or CPU), meters their memory, and extrapolates by layer to the
full depth: a :class:`~compute_budget.skill.hardware.measured.ProbeResult`.

It needs the optional ``probe`` extra (torch and transformers), which it imports only when it
runs: importing this package, or :class:`ProbeError`, needs neither. Nothing in
``compute_budget.skill``, ``tools`` or the CLI's default path imports this package.
"""

from __future__ import annotations

from .errors import ProbeError
from .run import run_probe

__all__ = ["ProbeError", "run_probe"]
