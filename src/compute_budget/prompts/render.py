"""Render results to markdown with the Jinja templates in ``templates/``.

One template per reply; ``StrictUndefined`` so a missing variable is an error, never a blank.
The filters here format numbers with their units; every template uses them, so a number reads
the same everywhere.
"""

from __future__ import annotations

import contextlib
import html
import math
import os
import re
import stat
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from jinja2.bccache import Bucket, FileSystemBytecodeCache

from .naming import arg, naming

__all__ = [
    "environment",
    "fmt_bytes",
    "fmt_count",
    "fmt_flops",
    "fmt_hours",
    "fmt_num",
    "fmt_usd",
    "inert",
    "render",
    "template_cache_dir",
]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
UNKNOWN = "unknown"


LARGE = 1e15
"""From this magnitude on, numbers are written in powers of ten (no 16-digit integers)."""


def _minus(text: str) -> str:
    """A leading minus sign as the typographic one (U+2212); none on a number that rounded
    to zero (``-0.00`` → ``0.00``)."""
    if not text.startswith("-"):
        return text
    digits = re.match(r"[\d.,]*", text[1:])
    if digits is not None and not re.search(r"[1-9]", digits.group()):
        return text[1:]
    return "−" + text[1:]


def _odd(value: float) -> str | None:
    """Infinity and NaN as Python writes them (``inf``, ``−inf``, ``nan``): a reply checker
    can find them, and formatting never raises on them."""
    return None if math.isfinite(value) else _minus(str(value))


def _scientific(value: float, digits: int = 3) -> str:
    """``1.23e15``, ``−4.50e-07``: ``digits`` significant digits, no ``+`` in the exponent."""
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    return f"{_minus(mantissa)}e{exponent.lstrip('+')}"


def fmt_flops(value: float | None) -> str:
    """``4.2e21`` → ``'4.20 × 10²¹'``."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    if value == 0:
        return "0"
    # The decimal exponent from Python's own formatting: exact, with no 10**k to under- or
    # overflow, and 9.999e20 rounds to 1.00e21.
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{_minus(mantissa)} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def fmt_count(value: float | None) -> str:
    """A count with a decimal suffix: ``7e9`` → ``'7B'``, ``1.5e12`` → ``'1.5T'``; from 10¹⁸
    and below 10⁻³ in powers of ten."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    rounded = float(f"{value:.3g}") + 0.0  # 999.99 → 1000 → '1K'; −0 → 0
    if abs(rounded) >= 1e18 or 0 < abs(rounded) < 1e-3:
        return _scientific(value)
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(rounded) >= scale:
            scaled = rounded / scale
            text = f"{scaled:.3g}" if abs(scaled) < 1000 else f"{scaled:,.0f}"
            return f"{_minus(text)}{suffix}"
    return _minus(f"{rounded:.3g}")


def fmt_num(value: float | None, digits: int = 3) -> str:
    """A plain number with thousands separators and about ``digits`` significant digits."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    if value == 0:
        return "0"
    magnitude = int(f"{value:e}".split("e")[1])
    if magnitude >= 15 or magnitude < -3:
        return _scientific(value, digits)
    if float(value).is_integer():
        return _minus(f"{value:,.0f}")
    decimals = max(0, digits - 1 - magnitude)
    return _minus(f"{value:,.{decimals}f}")


def fmt_hours(value: float | None) -> str:
    """A duration given in hours, in the unit that reads: ``57.2`` → ``'57.2 h'``, ``0.155`` →
    ``'9.30 min'``, ``1.72e-4`` → ``'0.619 s'`` (it read '1.72e-04 h')."""
    if value is None:
        return UNKNOWN
    if _odd(value) is not None or value >= 1 or value <= 0:
        return f"{fmt_num(value)} h"
    if value >= 1 / 60:
        return f"{fmt_num(value * 60)} min"
    return f"{fmt_num(value * 3600)} s"


DAYS_PER_YEAR = 365
"""The year of max_plan_days."""


def fmt_long(days: float | None, like: float | None = None) -> str:
    """A wall time over a plan's length, given in days: in days under two years (``366`` →
    ``'366 days'``; it read '1.0 years'), else in years (``4354`` → ``'11.9 years'``); in the
    unit ``like`` takes, when given (a range's end beside its centre)."""
    if days is None:
        return UNKNOWN
    if _odd(days) is not None or (like if like is not None else days) < 2 * DAYS_PER_YEAR:
        return f"{fmt_num(days)} days"
    return f"{fmt_num(days / DAYS_PER_YEAR)} years"


def fmt_plain(value: float | None) -> str:
    """A user's own number as they would write it: up to 4 significant digits, no padding."""
    if value is None:
        return UNKNOWN
    return _minus(f"{value + 0.0:.4g}")


BESIDE_MAX_DIGITS = 7
"""The most significant digits :func:`fmt_beside` spends telling two numbers apart."""


def fmt_beside(value: float | None, other: float | None) -> str:
    """``value`` as :func:`fmt_plain` writes it, with more significant digits (up to
    :data:`BESIDE_MAX_DIGITS`) when ``other``, shown beside it, would read the same: an interval
    0.0007 wide read '2.39 – 2.39', as if it were certain (``2.389686`` beside ``2.390378``
    → ``'2.3897'``, and that one beside it ``'2.3904'``)."""
    if value is None or other is None or not (math.isfinite(value) and math.isfinite(other)):
        return fmt_plain(value)
    for digits in range(4, BESIDE_MAX_DIGITS + 1):
        if f"{value + 0.0:.{digits}g}" != f"{other + 0.0:.{digits}g}":
            return _minus(f"{value + 0.0:.{digits}g}")
    return fmt_plain(value)


def fmt_usd(value: float | None) -> str:
    """US dollars: ``14022.4`` → ``'$14,022'``; cents below $100; ``None`` → ``'unknown'``;
    a negative amount with a leading minus sign (``'−$2,650,000'``); from $10¹⁵ in powers of
    ten (``'$1.23e15'``)."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    value += 0.0  # −0 → 0
    if 0 < abs(value) < 0.005:
        return "< $0.01" if value > 0 else "> −$0.01"
    if value < 0:
        return "−" + fmt_usd(-value)
    if value < 100:
        return f"${value:,.2f}"
    if value >= LARGE:
        return "$" + _scientific(value)
    return f"${value:,.0f}"


def fmt_bytes(value: float | None, decimals: int | None = None) -> str:
    """Bytes in GiB (2³⁰ bytes) with two decimals below 10 GiB, one above, or ``decimals``
    (two numbers compared must not print alike); from 10¹⁵ GiB in powers of ten."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    gib = value / 2**30 + 0.0  # −0 → 0
    if abs(gib) >= LARGE:
        return f"{_scientific(gib)} GiB"
    if decimals is None:
        decimals = 2 if abs(gib) < 10 else 1
    return _minus(f"{gib:,.{decimals}f} GiB")


def fmt_prob(value: float | None) -> str:
    """A probability as a percentage that never rounds to a false certainty: ``'> 99%'``."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    if value > 0.995:
        return "> 99%"
    if value < 0.005:
        return "< 1%"
    return f"{value * 100:.0f}%"


def fmt_pct(value: float | None) -> str:
    """A fraction as a percentage: ``0.25`` → ``'25%'``; ``'< 0.01%'`` for a tiny share;
    from 10¹³ (10¹⁵%) in powers of ten."""
    if value is None:
        return UNKNOWN
    if (odd := _odd(value)) is not None:
        return odd
    value += 0.0  # −0 → 0
    if 0 < abs(value) < 0.5e-4:
        return "< 0.01%" if value > 0 else "> −0.01%"
    if abs(value) >= LARGE / 100:
        mantissa, exponent = _scientific(value).split("e")
        return f"{mantissa}e{int(exponent) + 2}%"  # × 100 on the exponent: never overflows
    if 0 < abs(value) < 0.01:
        return _minus(f"{value * 100:.2f}%")
    return _minus(f"{value * 100:.0f}%")


MAX_USER_TEXT = 200
"""Characters of a user-supplied string a reply shows."""
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b.|[\x00-\x1f\x7f-\x9f\u2028\u2029"
                      r"\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""Escape sequences, control characters, and the invisible ones that reorder or hide text (bidi
overrides and isolates, zero-width spaces and joiners, the BOM)."""
_MARKDOWN = re.compile(r"([\\`*\[\]|~#])")
"""Markdown that could restyle or restructure a reply inline (underscores inside words do not
emphasise in CommonMark, so names keep theirs)."""


def inert(value: object) -> str:
    """A user-supplied string as inert text: escape sequences and control characters
    (newlines included) removed, markdown control characters backslash-escaped, HTML escaped,
    at most MAX_USER_TEXT characters. Every template shows user text through it."""
    text = _CONTROL.sub(" ", str(value))
    text = " ".join(text.split())
    if len(text) > MAX_USER_TEXT:
        text = text[: MAX_USER_TEXT - 1] + "…"
    text = html.escape(text, quote=False)
    return _MARKDOWN.sub(r"\\\1", text)


_OPTIONS = dict(
    extensions=["jinja2.ext.do"],
    undefined=StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
CACHE_ENV = "COMPUTE_BUDGET_CACHE"
"""Where compiled templates are kept: a directory, or ``off``; default
``$XDG_CACHE_HOME/compute-budget`` (``~/.cache/compute-budget``)."""


class _TemplateCache(FileSystemBytecodeCache):
    """Compiled templates on disk, so a command does not compile its templates on every start
    (compiling is most of a short command's time). Jinja checks each entry against its
    template's source and its own and Python's versions; the key also covers this
    environment's options. A cache that cannot be read or written is skipped, never an error."""

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return super().get_cache_key(f"{sorted(map(str, _OPTIONS.items()))}|{name}", filename)

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache_dir() -> Path | None:
    """The directory compiled templates are kept in, created if need be; None (compile every
    time) when ``COMPUTE_BUDGET_CACHE=off`` or when it cannot be made private to this user:
    the cache holds code, so one that another user could write is never used."""
    setting = os.environ.get(CACHE_ENV, "").strip()
    if setting.lower() == "off":
        return None
    if setting:
        root = Path(setting).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        root = (Path(xdg) if xdg else Path.home() / ".cache") / "compute-budget"
    directory = root / "templates"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
    except (OSError, RuntimeError):  # RuntimeError: no home directory
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return None
    return directory


@cache
def environment() -> Environment:
    """The Jinja environment: package templates, strict undefined, number filters, ``arg()``
    (:mod:`.naming`), and the compiled-template cache."""
    directory = template_cache_dir()
    env = Environment(
        loader=PackageLoader("compute_budget.prompts", "templates"),
        bytecode_cache=None if directory is None else _TemplateCache(str(directory)),
        **_OPTIONS,  # type: ignore[arg-type]
    )
    env.filters.update(
        flops=fmt_flops,
        count=fmt_count,
        num=fmt_num,
        hours=fmt_hours,
        long=fmt_long,
        plain=fmt_plain,
        beside=fmt_beside,
        usd=fmt_usd,
        gib=fmt_bytes,
        pct=fmt_pct,
        prob=fmt_prob,
        inert=inert,
    )
    env.globals["arg"] = arg
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>.md.j2`` with ``context``; collapse runs of blank lines.
    The ``mcp/`` templates speak to an assistant: ``arg()`` names arguments, not flags."""
    page = environment().get_template(f"{template}.md.j2")
    if template.startswith("mcp/"):
        with naming(None):
            text = page.render(**context)
    else:
        text = page.render(**context)
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() or (lines and lines[-1].strip()):
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"
