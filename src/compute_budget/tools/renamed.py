"""Arguments sent under their command-line names (``gpus`` for ``gpu_count``, ``price`` for
``usd_per_gpu_hour``, ``gain`` for ``predicted_gain``).

An assistant that has used the command line, or read its help, sends them. The reply names the
argument meant and keeps the value: asking the user again for a number they gave would be the
wrong relay. The names come from the command line's own parser, built only on this error path.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

__all__ = ["renamed_arguments"]

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


def renamed_arguments(command: str | None, fields: Collection[str],
                      given: Mapping[str, Any]) -> dict[str, str]:
    """The names in ``given`` that are not among ``fields`` but are ``command``'s flag for one
    of them: given name → the argument meant."""
    unknown = [name for name in given if name not in fields]
    if command is None or not unknown:
        return {}
    flag_fields = _flag_fields(command)
    return {name: flag_fields[name] for name in unknown
            if flag_fields.get(name) in fields and flag_fields[name] not in given}
