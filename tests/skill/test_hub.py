"""A Hugging Face model id resolves to its config.json: served by a local Hub stand-in.

Nothing here touches the network: a stdlib HTTP server on 127.0.0.1 answers what
``hf_hub_download`` asks for (``HEAD`` then ``GET`` of ``/{repo_id}/resolve/{revision}/config.json``
with ``ETag``, ``X-Repo-Commit`` and ``Content-Length``; errors as the Hub sends them, with
``X-Error-Code``), ``HF_ENDPOINT`` and ``HF_HOME`` point at it and at a temporary directory, and
every socket connection or name lookup that is not loopback fails the test.
"""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import constants as hub_constants  # read before HF_ENDPOINT is set
from pydantic import ValidationError

from compute_budget.skill.errors import ConfigError, InputError, UnreachableError
from compute_budget.skill.model.hub import check_model_id, fetch_config, split_model_id
from compute_budget.skill.model.param_count import count_params
from compute_budget.skill.model.source import ModelSource

CONFIGS = Path(__file__).parent.parent / "fixtures" / "configs"
LLAMA = (CONFIGS / "llama-2-7b-hf.json").read_bytes()
COMMIT = "a" * 40
SECRET = "s3cr3t-value-from-the-file"


@dataclass
class Repo:
    """What the stand-in answers for one repository."""

    status: int = 200
    code: str | None = None  # X-Error-Code, as the Hub sends it
    body: bytes = LLAMA
    announced_size: int | None = None  # a Content-Length on HEAD other than the body's


@dataclass
class Hub:
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _answer(self, send_body: bool) -> None:
            hub.requests.append((self.command, self.path))
            parts = self.path.split("/")
            # /org/name/resolve/revision/config.json
            if len(parts) != 6 or parts[3] != "resolve":
                return self._error(404, "RepoNotFound")
            repo = hub.repos.get(f"{parts[1]}/{parts[2]}")
            if repo is None:
                return self._error(404, "RepoNotFound")
            if parts[4] not in ("main", COMMIT):
                return self._error(404, "RevisionNotFound")
            if parts[5] != "config.json" or repo.status != 200:
                return self._error(repo.status if repo.status != 200 else 404,
                                   repo.code or "EntryNotFound")
            self.send_response(200)
            self.send_header("ETag", '"' + hashlib.sha1(repo.body).hexdigest() + '"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Type", "application/json")
            size = repo.announced_size if repo.announced_size and not send_body else None
            self.send_header("Content-Length", str(size or len(repo.body)))
            self.end_headers()
            if send_body:
                self.wfile.write(repo.body)

        def _error(self, status: int, code: str | None) -> None:
            body = b'{"error": "refused"}'
            self.send_response(status)
            if code is not None:
                self.send_header("X-Error-Code", code)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._answer(send_body=False)

        def do_GET(self) -> None:
            self._answer(send_body=True)

    return Handler


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        no_network: list[object]) -> Iterator[Hub]:
    state = Hub(repos={
        "meta-llama/Llama-2-7b-hf": Repo(),
        "meta-llama/Gated-7b": Repo(status=401, code="GatedRepo"),
        "someone/Private-7b": Repo(status=403),
        "TheBloke/Llama-GGUF": Repo(status=404, code="EntryNotFound"),
        "evil/huge": Repo(announced_size=50_000_000),
        "evil/deep": Repo(body=b'{"model_type": "llama", "x": ' + b"[" * 100 + b"]" * 100
                          + b"}"),
        "evil/secret": Repo(body=json.dumps({"model_type": SECRET}).encode()),
        "evil/binary": Repo(body=b"\xff\xfe\x00garbage"),
    })
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HF_ENDPOINT", state.url)
    # huggingface_hub's user-agent header asks its import-time ENDPOINT (hf.co) for a list of
    # AI agents unless telemetry is off; the library read HF_HUB_DISABLE_TELEMETRY at import,
    # so its constant is set here (the guard above fails the test if anything else leaks)
    monkeypatch.setattr(hub_constants, "HF_HUB_DISABLE_TELEMETRY", True)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE",
                 "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    yield state
    server.shutdown()
    server.server_close()
    thread.join()
    assert no_network == []  # nothing tried to leave the machine


def _config_requests(hub: Hub, repo_id: str) -> list[str]:
    return [method for method, path in hub.requests
            if path == f"/{repo_id}/resolve/main/config.json"]


def test_llama_config_resolves_to_its_exact_count(hub: Hub, tmp_path: Path) -> None:
    assert hub.url != hub_constants.ENDPOINT  # read at import: fetch_config must read it anew
    source = ModelSource(model="meta-llama/Llama-2-7b-hf")
    arch = source.architecture
    assert arch is not None
    assert arch.source == "hf:meta-llama/Llama-2-7b-hf"
    # 6,738,415,616: meta-llama/Llama-2-7b-hf model.num_parameters() (see test_architecture)
    assert count_params(arch).total == 6_738_415_616
    assert _config_requests(hub, "meta-llama/Llama-2-7b-hf") == ["HEAD", "HEAD", "GET"]
    cached = tmp_path / "hf" / "hub" / "models--meta-llama--Llama-2-7b-hf" / "snapshots"
    assert (cached / COMMIT / "config.json").read_bytes() == LLAMA


def test_second_call_reads_the_cache_offline(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    first = fetch_config("meta-llama/Llama-2-7b-hf")
    seen = len(hub.requests)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert fetch_config("meta-llama/Llama-2-7b-hf") == first == json.loads(LLAMA)
    assert len(hub.requests) == seen  # the server was not asked again


def test_cached_config_survives_an_unreachable_hub(
        hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    first = fetch_config("meta-llama/Llama-2-7b-hf")
    with socket.socket() as probe:  # a port nothing listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed}")
    assert fetch_config("meta-llama/Llama-2-7b-hf") == first


def test_the_model_argument_also_goes_by_its_attribute_name(hub: Hub) -> None:
    by_alias = ModelSource.model_validate({"model": "meta-llama/Llama-2-7b-hf"})
    assert by_alias.model_id == "meta-llama/Llama-2-7b-hf"
    again = ModelSource.model_validate(by_alias.model_dump())  # round trip by attribute name
    assert again.architecture == by_alias.architecture


def _refusal(model: str) -> str:
    with pytest.raises(ConfigError) as info:
        fetch_config(model)
    assert info.value.field == "model"
    text = str(info.value)
    # a well-formed id the network or the cache fails is not said to be "not allowed"
    verb = "could not be fetched" if isinstance(info.value, UnreachableError) else "is not allowed"
    assert text.startswith(f"model: {model!r} {verb};")
    assert "Traceback" not in text and "http" not in text  # no URL, no library message
    return text


def test_unknown_repository_is_not_found(hub: Hub) -> None:
    text = _refusal("nobody/No-Such-Model")
    assert "no such model repository on the Hugging Face Hub" in text
    assert "config" in text and "hf auth login" in text
    assert _config_requests(hub, "nobody/No-Such-Model") == ["HEAD"]


@pytest.mark.parametrize("repo_id", ["meta-llama/Gated-7b", "someone/Private-7b"])
def test_gated_or_private_repository_says_to_accept_and_log_in(hub: Hub, repo_id: str) -> None:
    text = _refusal(repo_id)
    assert "gated or private repository" in text
    assert "accept its license" in text and "log in" in text
    assert "give the config.json itself as config" in text


def test_repository_without_config_json(hub: Hub) -> None:
    text = _refusal("TheBloke/Llama-GGUF")
    assert "a repository with a config.json (this one has none" in text
    assert "params" in text


def test_unknown_revision(hub: Hub) -> None:
    text = _refusal("meta-llama/Llama-2-7b-hf@no-such-branch")
    assert "revision 'no-such-branch' not found" in text


def test_pinned_commit_is_fetched(hub: Hub) -> None:
    source = ModelSource(model=f"meta-llama/Llama-2-7b-hf@{COMMIT}")
    assert source.architecture is not None
    assert source.architecture.source == f"hf:meta-llama/Llama-2-7b-hf@{COMMIT}"
    assert any(path == f"/meta-llama/Llama-2-7b-hf/resolve/{COMMIT}/config.json"
               for _, path in hub.requests)


def test_offline_with_an_empty_cache(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    text = _refusal("meta-llama/Llama-2-7b-hf")
    assert "HF_HUB_OFFLINE is set" in text and "not in the Hugging Face cache" in text
    assert "fetch it once with the network" in text
    assert hub.requests == []


def test_config_announced_over_1_mb_is_not_downloaded(hub: Hub) -> None:
    text = _refusal("evil/huge")
    assert "config.json is at most 1 MB" in text
    assert [m for m, p in hub.requests if p.startswith("/evil/huge/")] == ["HEAD"]


def test_config_nested_too_deep(hub: Hub) -> None:
    text = _refusal("evil/deep")
    assert "nested at most 64 levels deep" in text


def test_config_that_is_not_utf8_json(hub: Hub) -> None:
    assert "UTF-8 JSON" in _refusal("evil/binary")


def test_errors_never_show_a_value_read_from_the_file(hub: Hub) -> None:
    with pytest.raises(ValueError, match="model_type: not one of") as info:
        ModelSource(model="evil/secret")
    assert SECRET not in str(info.value)


@pytest.mark.parametrize("model", [
    "gpt2",                                   # no organisation
    "org/name/extra",                         # a path, not an id
    "org/-name",                              # must start with a letter, digit or _
    "org/name-",                              # ... and end with one
    "org/na--me",                             # reserved by the Hub's cache layout
    "org/na..me",
    "org/name.git",
    "org/n\u00e4me",                          # ASCII only
    "org/" + "n" * 93,                        # 97 characters
    "",
    "   ",
    "https://huggingface.co/Qwen/Qwen2.5-7B",
    "configs/llama.json",
    "./org/name",
    "org/name@",                              # an empty revision
    "org/name@../../etc",                     # a revision that climbs out of the cache
    "org/name@a..b",
    "org/name@main@v2",
])
def test_malformed_ids_are_refused_without_a_request(hub: Hub, model: str) -> None:
    with pytest.raises(InputError) as info:
        fetch_config(model)
    assert info.value.field == "model"
    assert "a Hugging Face model id 'org/name'" in str(info.value)
    with pytest.raises(ValueError, match="model: "):
        ModelSource(model=model)
    assert hub.requests == []


def test_hints_for_a_page_address_and_a_local_file() -> None:
    with pytest.raises(InputError, match="the id, not the address of its page"):
        split_model_id("https://huggingface.co/Qwen/Qwen2.5-7B")
    with pytest.raises(InputError, match=r"give a local config\.json as config"):
        split_model_id("models/llama/config.json")


def test_long_ids_are_shown_cut_short() -> None:
    with pytest.raises(InputError) as info:
        split_model_id("x" * 10_000)
    assert len(str(info.value)) < 400


@pytest.mark.parametrize(("model", "expected"), [
    ("Qwen/Qwen2.5-7B", ("Qwen/Qwen2.5-7B", None)),
    (" meta-llama/Llama-2-7b-hf ", ("meta-llama/Llama-2-7b-hf", None)),
    ("org/name@v1.0", ("org/name", "v1.0")),
    ("org/name@refs/pr/1", ("org/name", "refs/pr/1")),
    (f"org/name@{COMMIT}", ("org/name", COMMIT)),
    ("_org/my_model.v2", ("_org/my_model.v2", None)),
])
def test_well_formed_ids(model: str, expected: tuple[str, str | None]) -> None:
    assert split_model_id(model) == expected
    repo_id, revision = expected
    assert check_model_id(model) == repo_id + ("" if revision is None else f"@{revision}")


@pytest.mark.parametrize("other", [{"preset": "llama-2-7b"}, {"config": {"model_type": "llama"}}])
def test_a_model_id_excludes_a_config_and_a_preset(other: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="model: 'org/name' is not allowed; one of a model id, "
                                         "a config or a preset"):
        ModelSource(model="org/name", **other)


def test_no_model_id_means_no_architecture() -> None:
    assert ModelSource().architecture is None


def test_importing_the_spec_does_not_import_huggingface_hub() -> None:
    code = ("import sys, compute_budget.skill.model.source; "
            "print('huggingface_hub' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "False"


def test_an_unreachable_hub_with_an_empty_cache_answers_at_once(
        hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """No connection to the Hub (no network, no DNS): the cache alone is asked, without the
    library's requests and their retries (about 20 s of back-off before the same answer)."""
    from compute_budget.skill.model import hub as hub_module

    with socket.socket() as probe:  # a port nothing listens on: connection refused
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    assert not hub_module._reachable(f"http://127.0.0.1:{closed}")
    assert hub_module._reachable(hub.url)
    monkeypatch.setattr(hub_module, "_reachable", lambda endpoint: False)
    text = _refusal("meta-llama/Llama-2-7b-hf")
    assert "could not be reached" in text and "not in the cache" in text
    assert text.startswith("model: 'meta-llama/Llama-2-7b-hf' could not be fetched;")
    # a preset of the same checkpoint (its source names the repository) needs no network
    with pytest.raises(ValidationError) as info:
        ModelSource(model_id="meta-llama/Llama-2-7b-hf")
    assert "or give it as preset 'llama-2-7b' (the same model, no network needed)" in str(
        info.value)
    assert _config_requests(hub, "meta-llama/Llama-2-7b-hf") == []  # nothing was asked
