"""Render results to markdown with the Jinja templates in ``templates/``.

One template per reply; ``StrictUndefined`` so a missing variable is an error, never a blank.
The filters here format numbers with their units; every template uses them, so a number reads
the same everywhere.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

__all__ = [
    "environment",
    "fmt_bytes",
    "fmt_count",
    "fmt_flops",
    "fmt_num",
    "fmt_usd",
    "render",
]

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
UNKNOWN = "unknown"


def fmt_flops(value: float | None) -> str:
    """``4.2e21`` → ``'4.20 × 10²¹'``."""
    if value is None:
        return UNKNOWN
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    mantissa = value / 10**exponent
    if round(mantissa, 2) >= 10:
        mantissa /= 10
        exponent += 1
    return f"{mantissa:.2f} × 10{str(exponent).translate(_SUPERSCRIPT)}"


def fmt_count(value: float | None) -> str:
    """A count with a decimal suffix: ``7e9`` → ``'7B'``, ``1.5e12`` → ``'1.5T'``."""
    if value is None:
        return UNKNOWN
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(value) >= scale:
            scaled = value / scale
            text = f"{scaled:.3g}" if scaled < 1000 else f"{scaled:,.0f}"
            return f"{text}{suffix}"
    return f"{value:.3g}"


def fmt_num(value: float | None, digits: int = 3) -> str:
    """A plain number with thousands separators and about ``digits`` significant digits."""
    if value is None:
        return UNKNOWN
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 15 or magnitude < -3:
        return f"{value:.{digits - 1}e}".replace("e+", "e")
    if float(value).is_integer():
        return f"{value:,.0f}".replace("-", "−")
    decimals = max(0, digits - 1 - magnitude)
    return f"{value:,.{decimals}f}".replace("-", "−")


def fmt_plain(value: float | None) -> str:
    """A user's own number as they would write it: up to 4 significant digits, no padding."""
    if value is None:
        return UNKNOWN
    return f"{value:.4g}".replace("-", "−")


def fmt_usd(value: float | None) -> str:
    """US dollars: ``14022.4`` → ``'$14,022'``; cents below $100; ``None`` → ``'unknown'``;
    a negative amount with a leading minus sign (``'−$2,650,000'``)."""
    if value is None:
        return UNKNOWN
    if value < 0:
        return "−" + fmt_usd(-value)
    if 0 < abs(value) < 0.005:
        return "< $0.01"
    if abs(value) < 100:
        return f"${value:,.2f}"
    return f"${value:,.0f}"


def fmt_bytes(value: float | None) -> str:
    """Bytes in GiB (2³⁰ bytes) with two decimals below 10 GiB."""
    if value is None:
        return UNKNOWN
    gib = value / 2**30
    return f"{gib:,.2f} GiB" if abs(gib) < 10 else f"{gib:,.1f} GiB"


def fmt_prob(value: float | None) -> str:
    """A probability as a percentage that never rounds to a false certainty: ``'> 99%'``."""
    if value is None:
        return UNKNOWN
    if value > 0.995:
        return "> 99%"
    if value < 0.005:
        return "< 1%"
    return f"{value * 100:.0f}%"


def fmt_pct(value: float | None) -> str:
    """A fraction as a percentage: ``0.25`` → ``'25%'``."""
    if value is None:
        return UNKNOWN
    if 0 < abs(value) < 0.01:
        return f"{value * 100:.2f}%"
    return f"{value * 100:.0f}%"


@cache
def environment() -> Environment:
    """The Jinja environment: package templates, strict undefined, number filters."""
    env = Environment(
        extensions=["jinja2.ext.do"],
        loader=PackageLoader("compute_budget.prompts", "templates"),
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        flops=fmt_flops,
        count=fmt_count,
        num=fmt_num,
        plain=fmt_plain,
        usd=fmt_usd,
        gib=fmt_bytes,
        pct=fmt_pct,
        prob=fmt_prob,
    )
    return env


def render(template: str, **context: Any) -> str:
    """Render ``templates/<template>.md.j2`` with ``context``; collapse runs of blank lines."""
    text = environment().get_template(f"{template}.md.j2").render(**context)
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() or (lines and lines[-1].strip()):
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"
