"""A Hugging Face model id resolved to its ``config.json`` through ``huggingface_hub``.

``fetch_config("Qwen/Qwen2.5-7B")`` downloads the repository's ``config.json`` once into the
Hugging Face cache and reads it from there afterwards, offline too. Accepted ids:

- ``org/name``: an organisation or user and a repository name, each of ASCII letters, digits,
  ``-``, ``_`` and ``.``, starting and ending with a letter, digit or ``_``, with no ``--`` or
  ``..``, not ending in ``.git``; at most 96 characters in all (the Hub's own rules). A bare
  ``name`` (a legacy id such as ``gpt2``) is refused: its canonical id has an organisation
  (``openai-community/gpt2``).
- ``org/name@revision``: the same at a branch, tag or commit (``@main``, ``@v1.0``,
  ``@refs/pr/1``, a 40-digit commit hash): path segments of letters, digits, ``-``, ``_`` and
  ``.``, none starting with ``.``, at most 128 characters. A commit hash pins the config.

The settings are read from the environment at each call, as ``huggingface_hub`` reads them at
its import: ``HF_ENDPOINT`` (the Hub or a mirror), ``HF_HUB_CACHE`` / ``HF_HOME`` (the cache),
``HF_HUB_OFFLINE`` (read the cache only). So the environment at the time of the call decides,
even when another library imported ``huggingface_hub`` first.

Before downloading, the file's size is asked for (an HTTP HEAD) and a ``config.json`` larger than
:data:`MAX_CONFIG_BYTES` is refused unread; the cached file is then read at most that many bytes
and parsed with the same size and depth limits as a local config. Every failure is a
:class:`ConfigError` (or, for a malformed id, an :class:`InputError`) naming the field ``model``
and saying what to do; none shows a value read from the file.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ..errors import ConfigError, InputError, UnreachableError
from .config_file import MAX_CONFIG_BYTES, UnreadableFileError, parse_config_json, read_small_text

__all__ = ["MODEL_ID_HELP", "check_model_id", "fetch_config", "split_model_id"]

MODEL_ID_HELP = (
    "a Hugging Face model id 'org/name' (letters, digits, '-', '_' and '.'; at most 96 "
    "characters; no '--' or '..'), optionally '@revision' (a branch, tag or commit), "
    "e.g. 'Qwen/Qwen2.5-7B'"
)
"""What ``model`` accepts, for error messages and field descriptions."""

_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"{_PART}/{_PART}")
_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9_.-]*"
_REVISION = re.compile(rf"{_SEGMENT}(?:/{_SEGMENT})*")
_MAX_REPO_ID = 96
_MAX_REVISION = 128
_SHOWN = 120
"""A refused id longer than this is shown cut short."""

_CONFIG_FILE = "config.json"
_TRUE = {"1", "ON", "YES", "TRUE"}
_OR_LOCAL = "or give the config.json itself as config (a path or the JSON object)"


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[: _SHOWN - 1] + "…"


def _malformed(value: str, why: str = "") -> InputError:
    return InputError("model", _shown(value), (f"{why}; " if why else "") + MODEL_ID_HELP)


def split_model_id(value: str) -> tuple[str, str | None]:
    """``(repo_id, revision)`` of a model id ``org/name[@revision]`` (surrounding spaces
    dropped); revision is None when not given. A malformed id raises :class:`InputError`
    naming ``model``."""
    if not isinstance(value, str):
        raise InputError("model", value, MODEL_ID_HELP)
    text = value.strip()
    repo_id, at, revision = text.partition("@")
    if text.lower().startswith(("http://", "https://", "hf.co/", "huggingface.co/")):
        raise _malformed(value, "the id, not the address of its page")
    if repo_id.lower().endswith(".json") or repo_id.startswith(("/", ".", "~")):
        raise _malformed(value, "a Hub id, not a file: give a local config.json as config")
    if (len(repo_id) > _MAX_REPO_ID or not _REPO_ID.fullmatch(repo_id) or "--" in repo_id
            or ".." in repo_id or repo_id.endswith(".git")):
        raise _malformed(value)
    if not at:
        return repo_id, None
    if len(revision) > _MAX_REVISION or not _REVISION.fullmatch(revision) or ".." in revision:
        raise _malformed(value, "the revision after '@' is a branch, tag or commit name")
    return repo_id, revision


def check_model_id(value: str) -> str:
    """The model id in its canonical form (``org/name`` or ``org/name@revision``)."""
    repo_id, revision = split_model_id(value)
    return repo_id if revision is None else f"{repo_id}@{revision}"


def _settings() -> tuple[str | None, str | None, bool]:
    """``(endpoint, cache_dir, offline)`` from the environment now, by huggingface_hub's rules
    (``HF_HUB_CACHE``, then ``HUGGINGFACE_HUB_CACHE``, then ``HF_HOME``/hub, then
    ``XDG_CACHE_HOME``/huggingface/hub); None leaves the library's default."""
    env = os.environ
    endpoint = env.get("HF_ENDPOINT", "").rstrip("/") or None
    cache = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if not cache and env.get("HF_HOME"):
        cache = os.path.join(env["HF_HOME"], "hub")
    if not cache and env.get("XDG_CACHE_HOME"):
        cache = os.path.join(env["XDG_CACHE_HOME"], "huggingface", "hub")
    cache_dir = os.path.expandvars(os.path.expanduser(cache)) if cache else None
    flag = env.get("HF_HUB_OFFLINE") or env.get("TRANSFORMERS_OFFLINE") or ""
    return endpoint, cache_dir, flag.upper() in _TRUE


def _error(model_id: str, allowed: str) -> ConfigError:
    return ConfigError("model", model_id, allowed)


def _unreached(model_id: str, allowed: str) -> ConfigError:
    return UnreachableError("model", model_id, allowed)


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _hub_error(exc: Exception, model_id: str, revision: str | None,
               offline: bool) -> ConfigError:
    """The error to show for ``exc`` raised by huggingface_hub while fetching ``model_id``."""
    from huggingface_hub import errors as hub_errors

    status = _status(exc)
    if isinstance(exc, hub_errors.GatedRepoError) or (
            status in (401, 403) and not isinstance(exc, hub_errors.RepositoryNotFoundError)):
        return _error(model_id, "a gated or private repository: accept its license on its Hub "
                                "page and log in (`hf auth login`, or set HF_TOKEN), " + _OR_LOCAL)
    if isinstance(exc, hub_errors.RepositoryNotFoundError):
        return _error(model_id, "no such model repository on the Hugging Face Hub (check the "
                                "spelling, e.g. 'Qwen/Qwen2.5-7B'; a private repository is "
                                "also not found until you log in with `hf auth login`), "
                                + _OR_LOCAL)
    if isinstance(exc, hub_errors.RevisionNotFoundError):
        return _error(model_id, f"revision {revision!r} not found in the repository: a branch, "
                                "tag or commit it has")
    if isinstance(exc, hub_errors.LocalEntryNotFoundError | hub_errors.OfflineModeIsEnabled):
        if offline:
            return _unreached(model_id, "HF_HUB_OFFLINE is set and its config.json is not in the "
                                    "Hugging Face cache (HF_HOME): fetch it once with the "
                                    "network (unset HF_HUB_OFFLINE), " + _OR_LOCAL)
        return _unreached(model_id, "the Hugging Face Hub could not be reached and its config.json "
                                "is not in the cache: it needs the network once (afterwards "
                                "HF_HUB_OFFLINE=1 reads it from the cache), " + _OR_LOCAL)
    if isinstance(exc, hub_errors.EntryNotFoundError):
        return _error(model_id, "a repository with a config.json (this one has none, as a "
                                "GGUF-only or adapter repository may not): " + _OR_LOCAL
                                + ", or the parameter count as params")
    if status is not None:
        return _unreached(model_id, f"the Hugging Face Hub answered HTTP {status}: try again "
                                "later, " + _OR_LOCAL)
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError | TimeoutError):
        reason = exc.strerror or type(exc).__name__
        return _unreached(model_id, f"its config.json could not be fetched or cached ({reason}): "
                                "check the network and that the Hugging Face cache (HF_HOME) "
                                "is writable, " + _OR_LOCAL)
    return _unreached(model_id, f"the Hugging Face Hub could not be reached ({type(exc).__name__}) "
                            "and its config.json is not in the cache: it needs the network "
                            "once (afterwards HF_HUB_OFFLINE=1 reads it from the cache), "
                            + _OR_LOCAL)


def _too_large(model_id: str) -> ConfigError:
    return _error(model_id, "a repository whose config.json is at most 1 MB (this one is "
                            "larger, so it is not a model config)")


def _remote_size(repo_id: str, revision: str | None, endpoint: str | None) -> int | None:
    """The size the Hub announces for the config.json (None when unknown); a definite refusal
    (not found, gated, no such file or revision) propagates, anything else (no network, a
    server error) returns None and leaves it to the download and the cache."""
    from huggingface_hub import errors as hub_errors, get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(repo_id, _CONFIG_FILE, revision=revision, endpoint=endpoint)
    try:
        size = get_hf_file_metadata(url).size
    except (hub_errors.RepositoryNotFoundError, hub_errors.RevisionNotFoundError,
            hub_errors.EntryNotFoundError):
        raise
    except hub_errors.HfHubHTTPError as exc:
        if _status(exc) in (401, 403):
            raise
        return None
    except Exception:  # no network, a proxy, a timeout: the download tries the cache
        return None
    return size if isinstance(size, int) else None


def _read_cached(path: str, model_id: str) -> str:
    """The cached config.json (a link into the cache's blobs), read as any config file is."""
    try:
        return read_small_text(os.path.realpath(path), MAX_CONFIG_BYTES)
    except UnreadableFileError as exc:
        if exc.reason.startswith("larger than"):
            raise _too_large(model_id) from None
        if exc.reason == "not UTF-8 text":
            raise _error(model_id, "a repository whose config.json is UTF-8 JSON") from None
        raise _error(model_id, f"a config.json the Hugging Face cache can give back "
                               f"({exc.reason}): check HF_HOME, " + _OR_LOCAL) from None


REACH_TIMEOUT_S = 3.0
"""Seconds to wait for a connection to the Hub before using the cache alone."""


def _reachable(endpoint: str | None) -> bool:
    """Whether the Hub endpoint accepts a TCP connection within REACH_TIMEOUT_S."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(endpoint or "https://huggingface.co")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=REACH_TIMEOUT_S):
            return True
    except OSError:
        return False


def fetch_config(model_id: str) -> dict[str, Any]:
    """The ``config.json`` object of Hugging Face model ``model_id`` (``org/name`` or
    ``org/name@revision``), through ``huggingface_hub.hf_hub_download``.

    Downloaded once into the Hugging Face cache (``HF_HOME``), from ``HF_ENDPOINT`` when set;
    with ``HF_HUB_OFFLINE=1`` only the cache is read. A malformed id raises
    :class:`InputError`; a repository that does not exist, is gated or private, has no
    config.json, cannot be reached with nothing cached, or whose config.json is over 1 MB,
    nested too deep or not JSON raises :class:`ConfigError`; each names ``model`` and says what
    to do, and none shows a value read from the file.
    """
    repo_id, revision = split_model_id(model_id)
    shown = check_model_id(model_id)
    endpoint, cache_dir, offline = _settings()
    from huggingface_hub import hf_hub_download  # slow to import: only when a model id is used

    # Unreachable (no network, no DNS): the cache alone, at once, instead of the library's
    # retries (about 20 s of back-off before the same answer).
    cache_only = offline or not _reachable(endpoint)
    try:
        if not cache_only:
            size = _remote_size(repo_id, revision, endpoint)
            if size is not None and size > MAX_CONFIG_BYTES:
                raise _too_large(shown)
        path = hf_hub_download(repo_id, _CONFIG_FILE, revision=revision, cache_dir=cache_dir,
                               local_files_only=cache_only, endpoint=endpoint)
    except ConfigError:
        raise
    except Exception as exc:  # a network boundary: every failure becomes a message
        raise _hub_error(exc, shown, revision, offline) from None
    text = _read_cached(str(path), shown)
    try:
        return parse_config_json(text)
    except ConfigError as exc:
        raise _error(shown, f"a repository whose config.json is {exc.allowed}") from None
