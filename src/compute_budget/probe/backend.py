"""torch and transformers, imported on first use.

They come with the optional ``probe`` extra; nothing else in compute-budget imports them. The
modules are typed ``Any`` here on purpose: the type checker neither needs them installed nor
reads their sources (reading torch costs a minute per cold cache), and the probe's own
results are checked by pydantic (:class:`~compute_budget.skill.hardware.measured.ProbeResult`).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .errors import INSTALL_HINT, ProbeError

__all__ = ["load", "require"]


def load(name: str) -> Any:
    """The module ``name`` (torch or transformers, or one of their submodules); ProbeError
    saying how to install them when it is missing."""
    try:
        return import_module(name)
    except ImportError as exc:
        missing = (exc.name or name).split(".")[0]
        raise ProbeError(f"the probe needs torch and transformers, and {missing} is not "
                         f"installed: {INSTALL_HINT}") from None


def require() -> tuple[Any, Any]:
    """torch and transformers, or ProbeError when either is missing. transformers' own
    warnings about the configs it builds (a ``loss_type`` it does not know, and the like) are
    silenced: the probe builds random models, and its reply says what it measured."""
    torch, transformers = load("torch"), load("transformers")
    transformers.logging.set_verbosity_error()
    return torch, transformers
