"""The one-line description of each tool argument, as the published schemas show it.

The lines live once, in ``templates/mcp/arguments.md.j2`` ("name: line"; "parent.name: line" for a
key of the objects in the list argument ``parent``); this module only reads them.
"""

from __future__ import annotations

from functools import cache

from .render import render

__all__ = ["argument_line", "argument_lines"]


@cache
def argument_lines() -> dict[str, str]:
    """Every argument's line, by name (or ``parent.name``)."""
    lines: dict[str, str] = {}
    for row in render("mcp/arguments").splitlines():
        name, sep, line = row.partition(": ")
        if sep and name.strip():
            lines[name.strip()] = line.strip()
    return lines


def argument_line(name: str, parent: str | None = None, *,
                  qualified_only: bool = False) -> str | None:
    """The line of argument ``name`` (of the objects in ``parent`` when given: its own line if
    any, else the argument's unless ``qualified_only``), None if none."""
    lines = argument_lines()
    if parent is not None and f"{parent}.{name}" in lines:
        return lines[f"{parent}.{name}"]
    return None if qualified_only else lines.get(name)
