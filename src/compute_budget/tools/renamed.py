"""Arguments sent under their command-line names (``gpus`` for ``gpu_count``, ``price`` for
``usd_per_gpu_hour``, ``uncertainty`` for ``gain_uncertainty``).

An assistant that has used the command line, or read its help, sends them. The reply names the
argument meant and keeps the value: asking the user again for a number they gave would be the
wrong relay. The names come from the command line's own parser, built only on this error path.
Not covered: ``gain`` and ``hardware``, the names of the tools' elicitation answers, which the
SDK resolves itself before a tool sees them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel

from ..prompts.mcp_texts import renamed_arguments_text
from ..skill.errors import shown_field, shown_value

__all__ = ["renamed_arguments", "with_renamed"]

INVERTED = frozenset({"must_fit"})
"""Fields whose flag says the opposite (``--ignore-memory`` is ``must_fit`` false): not mapped."""


@cache
def _flag_fields(command: str) -> dict[str, str]:
    """``command``'s fields by their flag's name, where the two differ (``gpus`` → gpu_count)."""
    from ..cli import build_parser
    from ..cli.parser import flag_names

    names = flag_names(build_parser(command), command)
    return {flag[2:].replace("-", "_"): field for field, flag in names.items()
            if flag.startswith("--") and field not in INVERTED
            and flag[2:].replace("-", "_") != field}


def renamed_arguments(command: str | None, arguments: type[BaseModel],
                      given: Mapping[str, Any]) -> dict[str, str]:
    """The names in ``given`` that ``arguments`` does not take (by field name or alias) but
    that are ``command``'s flag for one of its fields not given too: given name → the field."""
    accepted = {name for field, info in arguments.model_fields.items()
                for name in (field, info.alias) if name}
    unknown = [name for name in given if name not in accepted]
    if command is None or not unknown:
        return {}
    flag_fields = _flag_fields(command)
    return {name: flag_fields[name] for name in unknown
            if flag_fields.get(name) in accepted and flag_fields[name] not in given}


def with_renamed(tool: str, renamed: Mapping[str, str], given: Mapping[str, Any],
                 errors: str) -> str:
    """``errors`` (one line per bad argument) with the renamed arguments' "unknown argument"
    lines replaced by one sentence naming each argument meant and its value."""
    if not renamed:
        return errors
    told = tuple(f"{shown_field(name)}:" for name in renamed)
    named = renamed_arguments_text(tool, [(shown_field(name), meant, shown_value(given[name]))
                                          for name, meant in renamed.items()])
    return "\n".join([named, *(line for line in errors.splitlines() if not line.startswith(told))])
