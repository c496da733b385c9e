"""Arguments sent under their command-line names (``gpus`` for ``gpu_count``, ``price`` for
``usd_per_gpu_hour``, ``uncertainty`` for ``gain_uncertainty``), under a common synonym
(``num_gpus``, ``gpu_type``, ``deadline``: :data:`SYNONYMS`) or misspelled by a letter or two
(``gpu_cout``: a close match, difflib's ratio at least :data:`CLOSE`).

An assistant that has used the command line, or read its help, sends them. The reply names the
argument meant and keeps the value: asking the user again for a number they gave would be the
wrong relay. The names come from the command line's own parser, built only on this error path.
The tools' elicitation answers take parameter names no one sends (``gain_answer``), so ``gain``
and ``hardware`` reach this door as synonyms.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel

from ..prompts.mcp_texts import renamed_arguments_text
from ..skill.errors import shown_field, shown_value

__all__ = ["nested_arguments", "renamed_arguments", "with_renamed"]

SYNONYMS: dict[str, tuple[str, ...]] = {
    "gpu_count": ("num_gpus", "n_gpus", "gpu_num", "gpus_count", "num_devices", "device_count",
                  "devices", "count"),
    "gpu": ("gpu_type", "gpu_name", "accelerator", "device", "device_type", "hardware_type",
            "hardware"),
    "params": ("num_params", "n_params", "parameters", "model_size", "param_count"),
    "tokens": ("num_tokens", "n_tokens", "train_tokens", "training_tokens", "dataset_tokens"),
    "usd_per_gpu_hour": ("price_per_hour", "usd_per_hour", "hourly_price", "gpu_hour_price"),
    "deadline_days": ("deadline", "days", "max_days"),
    "budget_usd": ("budget", "max_budget", "budget_dollars"),
    "predicted_gain": ("expected_gain", "gain_expected", "gain"),
    "seq_len": ("sequence_length", "seq_length", "context_length", "max_seq_len",
                "max_seq_length", "context_len", "ctx_len"),
    "micro_batch": ("micro_batch_size", "batch_size_per_gpu", "per_device_batch_size"),
    "max_gpu_count": ("gpu_count", "num_gpus", "n_gpus", "max_gpus", "max_devices",
                      "max_num_gpus", "max_count"),
    "gpus": ("gpu", "gpu_type", "gpu_types", "accelerator", "accelerators", "gpu_list",
             "hardware_types"),
}
"""Names an assistant reaches for, by the argument they mean. The first field a tool takes wins:
``num_gpus`` is ``gpu_count`` in estimate_run_cost and ``max_gpu_count`` in plan_run, which has
no count of its own (its ``gpu`` is the list ``gpus``)."""
CLOSE = 0.85
"""The least difflib ratio at which an unknown name is taken for a misspelled argument."""
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
    that are ``command``'s flag for one of its fields not given too, else a synonym or a close
    misspelling of one (each field taken once): given name → the field."""
    accepted = _accepted(arguments)
    nested = nested_arguments(arguments, given)
    unknown = [name for name in given if name not in accepted and name not in nested]
    if not unknown:
        return {}
    flag_fields = _flag_fields(command) if command is not None else {}
    meant = {name: flag_fields[name] for name in unknown
             if flag_fields.get(name) in accepted and flag_fields[name] not in given}
    open_fields = sorted(accepted - set(given) - set(meant.values()))
    for name in (n for n in unknown if n not in meant):
        guess = next((field for field, names in SYNONYMS.items()
                      if name.lower() in names and field in open_fields), None)
        close = difflib.get_close_matches(name.lower(), open_fields, n=1, cutoff=CLOSE)
        if guess or close:
            meant[name] = guess or close[0]
            open_fields.remove(meant[name])
    return meant


def _accepted(arguments: type[BaseModel]) -> set[str]:
    return {name for field, info in arguments.model_fields.items()
            for name in (field, info.alias) if name}


def nested_arguments(arguments: type[BaseModel],
                     given: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Unknown names in ``given`` whose value is an object of arguments ``arguments`` takes,
    none of them given at the top level (``gain: {predicted_gain, gain_uncertainty}``)."""
    accepted = _accepted(arguments)
    return {name: value for name, value in given.items()
            if name not in accepted and isinstance(value, dict) and value
            and all(isinstance(k, str) and k in accepted and k not in given for k in value)}


def with_renamed(tool: str, renamed: Mapping[str, str], given: Mapping[str, Any],
                 errors: str, nested: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """``errors`` (one line per bad argument) with the "unknown argument" lines of renamed
    arguments and of objects holding arguments (``nested``) replaced by one sentence naming
    each argument meant and its value."""
    nested = nested or {}
    if not renamed and not nested:
        return errors
    told = tuple(f"{shown_field(name)}:" for name in (*renamed, *nested))
    named = renamed_arguments_text(
        tool, [(shown_field(name), meant, shown_value(given[name]))
               for name, meant in renamed.items()],
        [(shown_field(name), [(k, shown_value(v)) for k, v in inner.items()])
         for name, inner in nested.items()])
    return "\n".join([named, *(line for line in errors.splitlines() if not line.startswith(told))])
