"""The CLI's flags: for each command of the table (:mod:`compute_budget.operations`), the flags
it takes (help and choices from the spec's own fields, so a flag and a tool argument read the
same) and how they become the spec's fields (files read, lists split, switches turned over).

A flag's ``dest`` is its field's name; a field left out of the command line is not given (the
spec's default applies), so the spec reports every missing and bad value at once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import skill as sk
from ..skill.errors import InputError
from .files import read_data

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["CommandFlags", "fine_tuning_flags", "flag", "flash_flags", "given", "layout_flags",
           "model_flags", "pairs", "read_data_file", "run_flags"]

Fields = dict[str, Any]
_FILE_HELP = {
    "calibration": "Your team's past runs, a .csv with a header row or a .json list: params, "
                   "tokens, gpu, gpu-hours or wall-days (with gpu-count), and optionally "
                   "active-params, precision, name. They fit your own MFU on your hardware, "
                   "shrunk toward the calibrated prior by their number (not with {not_with}).",
    "probe": "The JSON file `compute-budget probe` wrote on this device: its measured step time "
             "and memory replace the MFU prior and scale the activation formula; communication "
             "stays modelled (not with {not_with}).",
}
"""The help of a field the command line reads from a file (the columns hyphenated, so that
the help does not name them as flags)."""
MAX_DATA_BYTES = 1_000_000
"""Largest data file (points, candidates) the CLI reads: what the parsers accept."""


def given(args: argparse.Namespace, *names: str) -> Fields:
    """The named flags that were actually given (None means: use the model's default)."""
    return {n: getattr(args, n) for n in names if getattr(args, n, None) is not None}


def _literal_choices(annotation: Any) -> list[Any] | None:
    """The values of a ``Literal`` annotation (inside ``X | None`` or ``Annotated``)."""
    from typing import Annotated, Literal, Union, get_args, get_origin

    origin = get_origin(annotation)
    if origin is Literal:
        return list(get_args(annotation))
    if origin in (Union, Annotated) or type(annotation).__name__ == "UnionType":
        for member in get_args(annotation):
            found = _literal_choices(member)
            if found:
                return found
    return None


_JSON_EXAMPLE = re.compile(r",? e\.g\. [\[{][^\]}]*[\]}]")
"""An example written as a JSON list or object in a field's description: the MCP argument's
shape, which a flag does not take (its note gives the flag's own)."""


def flag(p: argparse.ArgumentParser, model: type[BaseModel], field: str,
         name: str | None = None, *, note: str = "", **options: Any) -> None:
    """Add ``--field`` (or ``name``) with the field's own description as its help, and the
    field's own choices when it is a Literal."""
    description = _FILE_HELP.get(field) or model.model_fields[field].description or field
    if "{not_with}" in description:  # the command's other MFU flags, those it has
        others = [f"--{f.replace('_', '-')}" for f in ("mfu", "achieved_tflops", "calibration")
                  if f in model.model_fields and f != field]
        listed = [", ".join(others[:-1]), others[-1]] if others[1:] else others
        description = description.replace("{not_with}", " or ".join(listed))
    description = _JSON_EXAMPLE.sub("", description)  # MCP's ['h100'] and {'h100': 64}
    choices = _literal_choices(model.model_fields[field].annotation)
    if choices and "action" not in options:
        options.setdefault("choices", choices)
    p.add_argument(name or "--" + field.replace("_", "-"), dest=field,
                   help=description + (f" {note}" if note else ""), **options)


def read_data_file(path: str, field: str) -> tuple[str, str | None]:
    """The text of the user's data file ``path`` and its format by extension (csv, json or
    None), read like a config file (a regular UTF-8 file, checked before it is opened) of at
    most MAX_DATA_BYTES."""
    from ..skill.model.config_file import UnreadableFileError, read_small_text

    try:
        text = read_small_text(os.path.realpath(path), MAX_DATA_BYTES)
    except UnreadableFileError as exc:
        raise InputError(field, path, f"a readable .csv or .json file ({exc.reason})") from None
    suffix = os.path.splitext(path)[1].lower()
    return text, {".csv": "csv", ".json": "json"}.get(suffix)


def pairs(text: str, field: str) -> dict[str, str]:
    """``h100=64,a100=128`` → {"h100": "64", "a100": "128"}."""
    from ..skill.quantities import name_count_pairs  # pydantic: not at --help's start-up

    return name_count_pairs(text, field)


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


# --- the groups of flags the commands share ----------------------------------------------

def offload_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """``--offload`` and ``--no-offload`` (registered second, so errors name ``--offload``)."""
    p.add_argument("--no-offload", dest="offload", action="store_const", const=False,
                   help="Keep the optimizer state and weights on the devices: no CPU offload "
                        "(see --offload).")
    flag(p, model, "offload", action="store_const", const=True,
         note="Give this flag to offload whatever the cost.")


def flash_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    """``--no-flash-attention`` (its own help: the field's describes the kernels it turns off)
    and ``--flash-attention``."""
    p.add_argument("--no-flash-attention", dest="flash_attention", action="store_const",
                   const=False, help="Count eager attention, which stores the s×s attention "
                                     "scores (see --flash-attention).")
    flag(p, model, "flash_attention", "--flash-attention", action="store_const", const=True,
         note="Give this flag to count FlashAttention where transformers' default is eager.")


def model_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    flag(p, model, "params", metavar="N")
    flag(p, model, "model_id", "--model", metavar="ORG/NAME")
    flag(p, model, "config", metavar="PATH")
    flag(p, model, "preset", metavar="NAME", note="(`compute-budget params --list`)")
    flag(p, model, "active_params", metavar="N")
    for field, metavar in (("layers", "L"), ("hidden", "H"), ("heads", "A"), ("experts", "E"),
                           ("experts_per_token", "K")):
        flag(p, model, field, metavar=metavar)


def fine_tuning_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    flag(p, model, "trainable_params", metavar="N")
    flag(p, model, "lora_rank", metavar="R", type=int)
    flag(p, model, "lora_targets")
    flag(p, model, "weights_bits", type=int)


def layout_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    for field, metavar in (("seq_len", "S"), ("micro_batch", "B"), ("zero", "0-3"), ("tp", "T"),
                           ("pp", "P"), ("ep", "E")):
        flag(p, model, field, metavar=metavar)
    flag(p, model, "sp", action="store_const", const=True)
    flag(p, model, "recompute")
    offload_flags(p, model)
    flag(p, model, "host_ram_gib", metavar="GIB")
    flag(p, model, "optimizer", metavar="NAME")
    flag(p, model, "stack")
    flash_flags(p, model)


def _run_option_flags(p: argparse.ArgumentParser, model: type[BaseModel]) -> None:
    flag(p, model, "tokens", metavar="T", note="(required)")
    for field, name, metavar in (("mfu", None, "F"), ("achieved_tflops", None, "TF"),
                                 ("usd_per_gpu_hour", "--price", "USD"),
                                 ("peak_tflops", None, "TF"), ("failure_budget", None, "X"),
                                 ("batch_tokens", None, "T"), ("host_memory_gbs", None, "GBS")):
        flag(p, model, field, name, metavar=metavar)
    for field in ("mfu_convention", "precision", "family", "kind"):
        flag(p, model, field)
    flag(p, model, "calibration", metavar="FILE")
    flag(p, model, "probe", metavar="FILE")


def _parse_probe(text: str, *, fmt: str | None = None) -> Any:
    """A probe file's JSON, checked as the spec will check it (its errors name the key)."""
    if fmt != "json":
        raise InputError("probe", None, "the JSON file compute-budget probe wrote")
    data = json.loads(text)
    sk.ProbeResult.model_validate(data)
    return data


def _read_calibration(fields: Fields) -> Fields:
    """The ``--calibration`` file's runs and the ``--probe`` file's measurement in place of
    their paths (:mod:`.files` reads them)."""
    path = fields.get("calibration")
    if isinstance(path, str):
        fields["calibration"] = read_data(path, "--calibration", sk.parse_calibration)
    path = fields.get("probe")
    if isinstance(path, str):
        fields["probe"] = read_data(path, "--probe", _parse_probe, "JSON")
    return fields


def run_flags(p: argparse.ArgumentParser, model: type[BaseModel] | None = None) -> None:
    """The flags of a run: the model, its fine-tuning and layout, the devices, the options."""
    model = model or sk.RunSpec
    flag(p, model, "gpu", metavar="NAME", note="(required; `compute-budget gpus`)")
    flag(p, model, "gpu_count", "--gpus", metavar="K", note="(required)")
    model_flags(p, model)
    fine_tuning_flags(p, model)
    _run_option_flags(p, model)
    flag(p, model, "price_kind")
    for field, metavar in (("board_power_w", "W"), ("pue", "X"), ("grid_kg_co2_per_kwh", "KG")):
        flag(p, model, field, metavar=metavar)
    layout_flags(p, model)


@dataclass(frozen=True)
class CommandFlags:
    """What the CLI adds to an operation: its flags, and how they become the spec's fields."""

    add: Callable[[argparse.ArgumentParser], None]
    fields: Callable[[argparse.Namespace, type[BaseModel]], Fields] | None = None
    """args → the spec's fields; default: the flags given under the spec's field names."""
    json: Callable[[Any], Any] | None = None
    """result → what ``--json`` prints; default: the result."""
    after: Callable[[argparse.Namespace, Any], Any] | None = None
    """(args, result) → the result, once the command has written what it writes (a file)."""

    def spec_fields(self, args: argparse.Namespace, model: type[BaseModel]) -> Fields:
        if self.fields is not None:
            return _read_calibration(self.fields(args, model))
        return _read_calibration(given(args, *model.model_fields))

