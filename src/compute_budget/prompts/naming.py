"""How a reply names the arguments it asks for: as the door it is read at takes them.

The MCP tools take arguments by name (``flash_attention``, ``usd_per_gpu_hour``); the command
line takes flags (``--flash-attention``), some of them renamed (``--price``). A template writes
``arg("flash_attention")``; the door says how that reads with :func:`naming`: the CLI with its
parser's own flags, an assistant (and every ``mcp/`` template) with the argument names.
Unset, a reply names the CLI's flags, spelled from the names (:data:`CLI_RENAMED`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

__all__ = ["CLI_RENAMED", "arg", "cli_flag", "naming"]

CLI_RENAMED: Mapping[str, str] = MappingProxyType({
    "gpu_count": "--gpus", "usd_per_gpu_hour": "--price", "model_id": "--model",
    "predicted_gain": "--gain", "gain_uncertainty": "--uncertainty",
    "baseline_to_beat": "--baseline", "usd_per_unit_gain": "--value-per-unit",
    "max_gpu_count": "--max-gpus", "gpus": "--gpu-types", "budget_flops": "--budget",
})
"""The arguments whose flag is not ``--`` and the name hyphenated (a test checks them against
the parser's); per command, ``plan`` takes ``budget_usd`` as ``--budget`` and ``split``
``params`` as ``--sizes``, which the CLI's own flags give."""

_FLAGS: ContextVar[Mapping[str, str] | None] = ContextVar(
    "compute_budget_flags", default=MappingProxyType({}))
"""The flags of the command a reply is for (None: argument names, an assistant's)."""


def cli_flag(name: str) -> str:
    """The CLI's flag for argument ``name``, spelled from it: ``seq_len`` → ``--seq-len``,
    ``usd_per_gpu_hour`` → ``--price``."""
    return CLI_RENAMED.get(name) or "--" + name.replace("_", "-")


def arg(name: str) -> str:
    """Argument ``name`` as the door reads it: ``--flash-attention`` at the command line,
    ``flash_attention`` for an assistant; arguments named together (``zero/tp/pp``) each."""
    flags = _FLAGS.get()
    if flags is None:
        return name
    return "/".join(flags.get(n) or cli_flag(n) for n in name.split("/"))


@contextmanager
def naming(flags: Mapping[str, str] | None) -> Iterator[None]:
    """Replies rendered inside name arguments by ``flags`` (the CLI command's flag of each
    argument; one it lacks is spelled from its name), or by their names when None."""
    token = _FLAGS.set(flags)
    try:
        yield
    finally:
        _FLAGS.reset(token)
