"""What the command line writes besides its reply: the ``--plot`` picture and the ``probe``
command's ``--out`` file, safely.

A file goes only to a regular file that does not exist yet, or to one this tool wrote before
(a PNG whose Software tag is compute-budget's; a JSON file of the probe format); anything
else — a FIFO, a device, a directory, a symlink, another file — is refused with a clear error
unless ``--force`` is given, and even then
only a regular file or a symlink (replaced, never followed) is written over. The write is
atomic: a temporary file beside the target, then a rename, so a reader never sees half a
picture and a crash leaves the old file as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ..prompts.plots import PNG_SOFTWARE
from ..skill import PROBE_FORMAT, InputError

__all__ = ["check_picture_path", "write_picture", "write_probe"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PEEK = 4096
"""Bytes of an existing file read to recognise a picture of ours (the tag is near the start)."""


def _ours(path: Path, probe: bool = False) -> bool:
    """Whether the regular file at ``path`` is a PNG (or with ``probe`` a probe file) this
    tool wrote."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_PEEK)
    except OSError:
        return False
    if probe:
        return head.lstrip().startswith(b"{") and PROBE_FORMAT.encode() in head
    return head.startswith(PNG_SIGNATURE) and PNG_SOFTWARE.encode() in head


def _refusal(path: Path, force: bool, probe: bool = False) -> str | None:
    """Why ``path`` may not be written, or None."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"a file path that can be written ({exc.strerror or type(exc).__name__})"
    if stat.S_ISLNK(mode):
        return None if force else "a new file, not a symbolic link (--force replaces the link)"
    if not stat.S_ISREG(mode):
        return "a regular file (not a directory, FIFO or device)"
    if force or _ours(path, probe):
        return None
    what = "probe file" if probe else "picture"
    return f"a new file or a {what} this tool wrote (--force overwrites another file)"


def check_picture_path(path_text: str, *, force: bool = False) -> None:
    """Raise InputError naming ``plot`` when ``path_text`` may not be written."""
    why = _refusal(Path(path_text), force)
    if why is not None:
        raise InputError("plot", path_text, why)


def write_probe(path_text: str, text: str, *, force: bool = False) -> None:
    """Write a probe's JSON ``text`` to ``path_text`` atomically, or raise InputError naming
    ``out``."""
    why = _refusal(Path(path_text), force, probe=True)
    if why is not None:
        raise InputError("out", path_text, why)
    _write(path_text, text.encode(), "out")


def write_picture(path_text: str, png: bytes, *, force: bool = False) -> None:
    """Write ``png`` to ``path_text`` atomically, or raise InputError naming ``plot``."""
    check_picture_path(path_text, force=force)
    _write(path_text, png, "plot")


def _write(path_text: str, data: bytes, field: str) -> None:
    """``data`` to ``path_text`` through a temporary file and a rename."""
    path = Path(path_text)
    directory = path.parent if str(path.parent) else Path(".")
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.",
                                             suffix=".tmp")
    except OSError as exc:
        raise InputError(field, path_text, "a file path in a directory that can be written "
                         f"({exc.strerror or type(exc).__name__})") from None
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise InputError(field, path_text, f"a file path that can be written "
                         f"({exc.strerror or type(exc).__name__})") from None
