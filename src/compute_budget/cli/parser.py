"""The CLI's argument parser: argparse reporting every bad input the same way, refusing a flag
given twice, and naming fields by the flags the user typed."""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence
from typing import Any

__all__ = ["Parser", "UsageError", "attach_negative_values", "flag_names", "help_names_flags"]


class UsageError(Exception):
    """Raised instead of argparse's own exit, so every bad input is reported the same way."""


class Parser(argparse.ArgumentParser):
    """argparse, reporting every bad input the same way, refusing a flag given twice
    (argparse would silently keep the last value) and taking no abbreviation of a flag
    (``--tok`` is not ``--tokens``: a flag added later would change what it means)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:
        raise UsageError(f"{self.prog}: {message}")

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if action.option_strings and not isinstance(
                action, argparse._HelpAction | argparse._VersionAction):
            action.__class__ = Parser._once(type(action))
        return action

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given: dict[str, Any] = {}
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, naming the command an unknown flag was given to and the flag meant: an
        MCP argument's name (``--predicted-gain``) is its flag's (``--gain``), a near miss
        (``--tok``) the flag it is near."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            raise UsageError(self._unrecognized(getattr(parsed, "command", None), extras))
        return parsed

    def _unrecognized(self, command: str | None, extras: Sequence[str]) -> str:
        from ..prompts import render

        if command is None:
            return render("cli/unrecognized", prog=self.prog, extras=extras, meant=[]).strip()
        flag_of = flag_names(self, command)
        flags = [f for f in flag_of.values() if f.startswith("--")]
        meant: list[dict[str, Any]] = []
        for given in (e.split("=", 1)[0] for e in extras if e.startswith("--")):
            flag = flag_of.get(given[2:].replace("-", "_")) or OTHER_NAMES.get((command, given))
            if (command, given) in COUNT_FLAGS:  # plan's gpus are types; a count has its flags
                meant.append({"given": given, "flag": flag, "counts": COUNT_FLAGS[command, given]})
            elif flag is not None and flag.startswith("--") and flag != given:
                meant.append({"given": given, "flag": flag, "renamed": True, "counts": None})
            elif near := difflib.get_close_matches(given, flags, n=1, cutoff=0.75):
                meant.append({"given": given, "flag": near[0], "renamed": False, "counts": None})
        return render("cli/unrecognized", prog=f"{self.prog} {command}", command=command,
                      extras=extras, meant=meant).strip()

    @staticmethod
    def _once(kind: type[argparse.Action]) -> type[argparse.Action]:
        """``kind``, refusing a second occurrence of its flag in one command line."""

        def call(self: argparse.Action, parser: argparse.ArgumentParser,
                 namespace: argparse.Namespace, values: Any, option_string: str | None = None,
                 ) -> None:
            given: dict[str, Any] = getattr(parser, "_given", {})
            if self.dest in given:
                first, earlier = given[self.dest]
                if first != option_string:  # --offload --no-offload
                    raise argparse.ArgumentError(
                        None, f"{first} and {option_string} say opposite things; give one")
                both = "" if values in (None, []) else f" ({earlier!r} and {values!r})"
                raise argparse.ArgumentError(self, f"given more than once{both}; give it once")
            given[self.dest] = (option_string, values)
            kind.__call__(self, parser, namespace, values, option_string)

        return type(kind.__name__, (kind,), {"__call__": call})


OTHER_NAMES = {("plan", "--gpu"): "--gpu-types"}
"""Flags of other commands whose field this command names otherwise: plan searches types."""
COUNT_FLAGS = {("plan", "--gpus"): ("--max-gpus", "--available")}
"""Flags other commands take a count with, where this command's field of that name is not a
count: plan's ``gpus`` lists device types (``--gpu-types``); its counts are these flags."""


def help_names_flags(p: argparse.ArgumentParser) -> None:
    """Help texts come from the model fields, which name other fields (``metric_now``,
    ```recompute```, "not together with mfu"); on the command line they name the flags
    (``--metric-now``), as its errors do (:func:`~compute_budget.skill.errors.rename_fields`)."""
    from ..skill.errors import rename_fields

    flag_of = {a.dest: a.option_strings[0] for a in p._actions
               if a.option_strings and a.dest not in ("help", "json", "detail")}
    for action in p._actions:
        if action.help:
            action.help = rename_fields(action.help, flag_of)


def flag_names(parser: argparse.ArgumentParser, command: str) -> dict[str, str]:
    """Field → the flag the user typed for it, for ``command``: error messages name flags."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub: argparse.ArgumentParser = subparsers.choices[command]
    flags = {a.dest: a.option_strings[0] if a.option_strings else str(a.metavar or a.dest)
             for a in sub._actions if a.dest not in ("help", "json", "detail")}
    if "model_id" in flags:  # the field's name in messages is its alias, "model"
        flags["model"] = flags["model_id"]
    return flags


def attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--params -7B`` → ``--params=-7B``, so argparse does not take ``-7B`` for a flag and the
    value reaches validation, which names the flag and says what is allowed."""
    out: list[str] = []
    for token in argv:
        if (out and out[-1].startswith("--") and "=" not in out[-1]
                and len(token) > 1 and token[0] == "-" and (token[1].isdigit() or token[1] == ".")):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out
