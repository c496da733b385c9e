"""Texts the MCP server shows: instructions, tool descriptions, the procedure, questions.

Each lives once, in a template under ``templates/mcp/``; these functions only render them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..skill.hardware.mfu_table import ObservedMfu, load_mfu_priors
from .render import render

__all__ = [
    "missing_inputs_text",
    "one_device_text",
    "prevalidate_text",
    "procedure_text",
    "question_text",
    "renamed_arguments_text",
    "server_instructions",
    "tool_description",
]


def server_instructions() -> str:
    """The server's instructions to the assistant."""
    return render("mcp/instructions").strip()


def tool_description(name: str) -> str:
    """When to call tool ``name`` and what to ask the user first."""
    return render(f"mcp/tool_{name}").strip()


def _published() -> ObservedMfu | None:
    """The end-to-end MFU the published runs of the calibration set reached (the procedure
    quotes it)."""
    return load_mfu_priors().observed()


def procedure_text() -> str:
    """The five-step procedure, as an assistant should follow it."""
    return render("mcp/procedure", observed=_published())


def prevalidate_text(description: str | None = None, gpu: str | None = None) -> str:
    """The ``prevalidate_run`` prompt: the procedure, with the user's run if given."""
    return render("mcp/prevalidate_run", description=description, gpu=gpu,
                  observed=_published())


def question_text(key: Literal["hardware", "gain"]) -> str:
    """The question shown to the user when the server asks for missing inputs."""
    return render(f"mcp/ask_{key}").strip()


def missing_inputs_text(tool: str, missing: Sequence[tuple[str, str]], declined: bool) -> str:
    """Which inputs are missing and what each means, for clients that cannot be asked."""
    rows = [{"name": name, "description": description} for name, description in missing]
    return render("mcp/missing_inputs", tool=tool, missing=rows, declined=declined).strip()


def duplicate_keys_text(paths: Sequence[str]) -> str:
    """The error of a tool call whose arguments repeat a key (``paths`` as the caller wrote
    them, shown through the errors' filter)."""
    from ..skill.errors import shown_field

    return render("mcp/duplicate_keys", paths=[shown_field(p) for p in paths[:10]]).strip()


def renamed_arguments_text(tool: str, renamed: Sequence[tuple[str, str, str]],
                           nested: Sequence[tuple[str, Sequence[tuple[str, str]]]] = ()) -> str:
    """Arguments sent under their command-line names: (given, meant, value as quoted); and
    objects holding arguments: (given, [(argument, value as quoted)])."""
    rows = [{"given": given, "meant": meant, "value": value} for given, meant, value in renamed]
    held = [{"given": given, "inner": list(inner)} for given, inner in nested]
    return render("mcp/renamed_arguments", tool=tool, renamed=rows, nested=held).strip()


def one_device_text(tool: str) -> str:
    """The hint beside an error for a list of devices sent as ``gpu``, which takes one."""
    return render("mcp/one_device", tool=tool).strip()
