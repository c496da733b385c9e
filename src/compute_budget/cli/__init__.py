"""The ``compute-budget`` command line: the operations of the table, at a terminal.

Each subcommand is an operation of :mod:`compute_budget.operations`: its flags become the
operation's spec (:mod:`.commands`), validated once, then the operation's call and reply; the
result prints as markdown, or as JSON with ``--json``. Bad input prints every bad flag, each
named with the value and what is allowed, and exits with status 2. This package must not
import ``mcp``, and it imports from ``skill`` only what the command given needs (the parser
adds only that subcommand's flags): the CLI has to start fast.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import ValidationError

from .. import __version__
from ..operations import OPERATIONS, Reply, by_command, reply_text
from ..skill.errors import ComputeBudgetError, describe_error, not_finite_cause
from .commands import FLAGS
from .files import DataFileError
from .parser import Parser, UsageError, attach_negative_values, flag_names, help_names_flags

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
CATALOG_HINT = "`compute-budget gpus` lists the catalog"
FILE_FIELDS = ("calibration", "probe", "points")
"""Fields the command line reads from a file: an error on one quotes the file's path."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; every subcommand has help (a test checks it).

    Flags come from the models' field descriptions, and building a model's schema is most of
    a start-up's time, so ``command`` names the one subcommand to give its flags (the others
    are listed with their help, flagless); None gives every subcommand its flags.
    """
    parser = Parser(
        prog="compute-budget",
        description="Estimate the FLOPs, time, memory and dollars of a training run, and decide "
                    "whether its predicted gain is worth it.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=Parser)
    for operation in OPERATIONS:
        if operation.command is None:
            continue
        p = sub.add_parser(operation.command, help=operation.title,
                           description=operation.title)
        if command is None or command == operation.command:
            p.add_argument("--json", action="store_true", help="print the result as JSON")
            p.add_argument("--detail", choices=["short", "full"], default="short",
                           help="full: every source quoted and the breakdowns (default short)")
            if operation.picture is not None:
                p.add_argument("--force", action="store_true",
                               help="let --plot overwrite an existing file it did not draw")
            FLAGS[operation.command].add(p)
            help_names_flags(p)
    return parser


def _emit(payload: Any, markdown: str, as_json: bool) -> str:
    if not as_json:
        return markdown

    def plain(item: Any) -> Any:
        return item.model_dump(mode="json") if hasattr(item, "model_dump") else item

    data = plain(payload) if not isinstance(payload, list | tuple) else [plain(p) for p in payload]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _presets(as_json: bool) -> str:
    from .. import skill as sk
    from ..prompts import render_presets

    reports = [sk.param_report(sk.get_preset(name)) for name in sk.list_presets()]
    return _emit(reports, render_presets(reports), as_json)


def _write_plot(path: str, picture: Any, force: bool) -> None:
    """Draw ``picture`` to the ``--plot`` file (matplotlib is imported only here); the path is
    checked before anything is drawn (:mod:`.output`)."""
    from ..prompts.plots import draw_png
    from .output import check_picture_path, write_picture

    check_picture_path(path, force=force)
    write_picture(path, draw_png(picture), force=force)


def run(args: argparse.Namespace, names: Mapping[str, str] | None = None) -> str:
    """The reply of the command ``args`` names (raises on bad input), naming arguments by
    ``names``, the command's flag of each (:func:`.parser.flag_names`)."""
    if getattr(args, "list_presets", False):
        return _presets(args.json)
    operation, flags = by_command(args.command), FLAGS[args.command]
    model = operation.spec_model
    spec = model.model_validate(flags.spec_fields(args, model))
    if getattr(args, "utilization", None) is not None:
        sys.stderr.write("note: --utilization is deprecated; use --mfu\n")
    result = operation.call(spec)
    if flags.after is not None:
        result = flags.after(args, result)
    if operation.picture is not None and getattr(args, "plot", None) is not None:
        _write_plot(args.plot, operation.picture(spec, result), getattr(args, "force", False))
    full = args.detail == "full" or getattr(args, "sources", False)
    markdown = reply_text(operation, result, Reply(full=full, assistant=False, flags=names))
    payload = result if flags.json is None else flags.json(result)
    return _emit(payload, markdown, args.json)


def _message(exc: BaseException, parser: argparse.ArgumentParser,
             args: argparse.Namespace) -> str:
    """The error, with fields named by the flags the user typed (a data file's by its columns,
    as it names them) and a file's path quoted for what was read from it."""
    flag_of = flag_names(parser, args.command)
    paths = {f: v for f in FILE_FIELDS if isinstance(v := getattr(args, f, None), str)}
    text = describe_error(exc, None if isinstance(exc, DataFileError) else flag_of,
                          catalog_hint=CATALOG_HINT, shown_as=paths)
    message = re.sub(  # fields named together ("layers/hidden/heads:") by their flags too
        r"^(\w+(?:/\w+)+):",
        lambda m: "/".join(flag_of.get(f, f) for f in m[1].split("/")) + ":", text,
        flags=re.MULTILINE)
    if not_finite_cause(exc) is not None:
        numbers = ", ".join(f"{flag_of[dest]} {value}" for dest, value in vars(args).items()
                            if dest in flag_of and isinstance(value, str))
        message = f"{args.command}: {message} (given: {numbers or 'the defaults'})"
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0, or 2 for bad input)."""
    tokens = attach_negative_values(sys.argv[1:] if argv is None else argv)
    parser = build_parser(tokens[0] if tokens else "")
    try:
        args = parser.parse_args(tokens)
        reply = run(args, flag_names(parser, args.command))
    except UsageError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except (ComputeBudgetError, ValidationError) as exc:
        sys.stderr.write(f"error: {_message(exc, parser, args)}\n")
        return EXIT_USAGE
    try:
        sys.stdout.write(reply)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
