"""The one error the probe raises for what the user can change (no torch needed to catch it)."""

from __future__ import annotations

from ..skill.errors import ComputeBudgetError

__all__ = ["INSTALL_HINT", "ProbeError"]

INSTALL_HINT = "pip install 'compute-budget[probe]'"
"""How to get what the probe needs: the optional ``probe`` extra (torch and transformers)."""


class ProbeError(ComputeBudgetError):
    """The probe cannot run as asked: torch or transformers is missing, transformers cannot
    build the config's ``model_type``, or the measured layers do not fit on the device. A
    :class:`~compute_budget.skill.errors.ComputeBudgetError`, so the CLI answers with the
    message and exit status 2; the message is one sentence, never a traceback."""
