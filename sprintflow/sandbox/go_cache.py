"""Go's standard library compiled once by the judge: a warm build cache no project code ever wrote.

Every ``go build``, ``go vet`` and ``go test`` starts from an empty build cache in a sandbox (its
HOME is thrown away), so each one compiled ``runtime``, ``fmt``, ``testing`` and the rest of the
standard library again: ``go test`` of a one-file module took 17 s cold and 0.3 s warm here.

A build cache is written by whatever runs with it, and ``go test`` runs the project's code: a
cache kept from judged runs could be rewritten by a test binary (an entry's output is trusted by
its action id, not checked against its content), and a later verdict would build on it. So the
cache the judge gives is built by ``go build std`` alone, in an empty folder, with the toolchain
and environment the commands use, and nothing else ever writes it:

* in Docker it is part of the Go runtime layer (:func:`std_cache_steps`, at :data:`GO_CACHE`):
  each container writes into its own copy-on-write layer, gone with the container;
* on the host it is a folder of the judge's (:func:`host_std_cache`), keyed by what ``go env``
  says of the toolchain; each command gets it read-only under an overlay whose writes vanish
  (:data:`HOST_GO_CACHE`).

Its files' times lie far ahead: Go refreshes the time of an entry it uses once it is an hour
old (a write, which would copy the file into the command's layer every run) and trims entries
unused for five days, and neither happens to an entry from the future. A cache built for
another toolchain or other flags only misses (Go's action ids name every input), so the worst
a stale one can do is cost the cold build it was meant to save.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import shutil
import tempfile
import uuid
from pathlib import Path

from sprintflow.io.containment import Bind, Containment, containment_unavailable
from sprintflow.io.files import file_lock
from sprintflow.io.process import run_command
from sprintflow.io.secrets import strategy_env

__all__ = ["GO_CACHE", "HOST_GO_CACHE", "STD_CACHE_TIMEOUT_S", "host_std_cache", "std_cache_script",
           "std_cache_steps"]

logger = logging.getLogger("sprintflow.sandbox.go_cache")

GO_CACHE = "/opt/go-cache"
"""GOCACHE in a Go runtime layer: the standard library compiled when the layer was built."""
HOST_GO_CACHE = "/tmp/.sprintflow-go-cache"
"""GOCACHE of a contained host command in a Go module (in its private /tmp)."""
STD_CACHE_TIMEOUT_S = 900
AHEAD = "2100-01-01"
"""The files' time: ahead of any clock, so Go neither refreshes nor trims them."""
_READY = ".sprintflow-ready"
_TOOLCHAIN_ENV = ("GOROOT", "GOVERSION", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED", "CC", "GOEXPERIMENT")


def std_cache_script(cache: str, go: str = "go") -> str:
    """The shell that compiles the standard library into the build cache ``cache`` with ``go``, from an
    empty folder (so no project's code or settings take part), then dates its files ahead and lets any
    user write it (a container's user copies what it writes into its own layer).

    Example:
        >>> print(std_cache_script("/opt/go-cache", "/opt/go/bin/go"))  # doctest: +NORMALIZE_WHITESPACE
        mkdir -p /opt/go-cache && cd "$(mktemp -d)" && GOCACHE=/opt/go-cache /opt/go/bin/go build std
        && find /opt/go-cache -exec touch -h -d 2100-01-01 {} + && chmod -R a+rwX /opt/go-cache
    """
    return (f"mkdir -p {cache} && cd \"$(mktemp -d)\" && GOCACHE={cache} {go} build std "
            f"&& find {cache} -exec touch -h -d {AHEAD} {{}} + && chmod -R a+rwX {cache}")


def std_cache_steps(go: str) -> list[str]:
    """The Dockerfile lines of a Go runtime layer that give it the standard library's build cache."""
    return [f"RUN {std_cache_script(GO_CACHE, go)}", f"ENV GOCACHE={GO_CACHE}"]


def host_std_cache(folder: Path, env: dict[str, str]) -> Path | None:
    """The judge's standard-library build cache for the host toolchain that ``env``'s PATH finds,
    under ``folder``: built the first time (about 25 s, once per toolchain), then reused.

    None where it cannot be had (no Go, no containment to give it read-only, a build that
    failed): the command then starts cold, as it would without it.
    """
    if containment_unavailable() is not None:
        return None
    toolchain = _host_toolchain(env.get("PATH", ""))
    if toolchain is None:
        return None
    cache = folder / hashlib.sha256(toolchain.encode()).hexdigest()[:32]
    if (cache / _READY).is_file():
        return cache
    with file_lock(folder / f"{cache.name}.lock"):
        if (cache / _READY).is_file():  # another evaluation built it meanwhile
            return cache
        return _build(cache, env)


@functools.cache
def _host_toolchain(path: str) -> str | None:
    """What names the host toolchain on ``path`` and how it compiles (``go env``), or None without one."""
    go = shutil.which("go", path=path)
    if go is None:
        return None
    with tempfile.TemporaryDirectory() as empty:  # no go.mod: its toolchain line must not choose another go
        result = run_command([go, "env", *_TOOLCHAIN_ENV], cwd=empty, timeout=60, shell=False,
                             env=strategy_env({"GOTOOLCHAIN": "local"}, base={"PATH": path}))
    if result.exit_code != 0 or result.timed_out:
        logger.info("no Go standard-library cache: `go env` failed: %s", result.stderr.strip()[-300:])
        return None
    return result.stdout


def _build(cache: Path, env: dict[str, str]) -> Path | None:
    """Compile the standard library into ``cache`` (contained, no network); None when that failed."""
    fresh = cache.with_name(f"{cache.name}.new-{uuid.uuid4().hex[:8]}")
    fresh.mkdir(parents=True)
    logger.info("compiling Go's standard library once for this toolchain (a warm cache for every Go command)")
    result = run_command(std_cache_script(HOST_GO_CACHE), cwd="/", timeout=STD_CACHE_TIMEOUT_S, env=env,
                         contain=Containment(binds=(Bind(str(fresh), HOST_GO_CACHE, writable=True),),
                                             network=False))
    if result.exit_code != 0 or result.timed_out:
        logger.warning("no Go standard-library cache: `go build std` failed: %s", result.stderr.strip()[-500:])
        shutil.rmtree(fresh, ignore_errors=True)
        return None
    (fresh / _READY).touch()
    shutil.rmtree(cache, ignore_errors=True)
    fresh.rename(cache)
    return cache
