"""Engines: the agent CLIs that answer prompts, run as shell commands.

An engine is a command line run in a working directory. It reads the prompt on
stdin and writes its answer on stdout: plain text, or a JSON envelope carrying
the answer with token usage and cost, as agent CLIs print with a JSON output
flag. Every role (planner, generator, evaluator, scorer) calls engines through
``run_engine``; a failed call is an ``EngineReply`` with ``ok=False``, the
reason and the raw output, never an exception, so a bad answer is a failed
step and not a crash. ``extract_json`` finds the JSON object in an answer
(bare, fenced or wrapped in prose), for every role that asks for JSON.

Which command a role uses is decided by ``resolve_engine``: an explicit
``--engine`` beats ``SPRINTFLOW_<ROLE>_ENGINE``, which beats
``SPRINTFLOW_ENGINE``, which beats the project config. A preset name such as
``claude`` expands to its command line; any other string is a command.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sprintflow.errors import ConfigError
from sprintflow.io.documents import loads_json, shallow
from sprintflow.io.process import Containment, run_command
from sprintflow.settings import Settings, get_settings

__all__ = [
    "DEFAULT_ENGINE_TIMEOUT",
    "ENGINE_PRESETS",
    "EngineReply",
    "engine_env",
    "engine_label",
    "expand_engine",
    "extract_json",
    "parse_engine_output",
    "resolve_engine",
    "run_engine",
]

DEFAULT_ENGINE_TIMEOUT = 900.0

ENGINE_PRESETS: dict[str, str] = {
    "claude": "claude -p --output-format json",
    "codex": "codex exec -",
    "gemini": "gemini --output-format json",
    "aider": "aider --yes-always --no-pretty --no-stream --no-auto-commits --message-file /dev/stdin",
}
"""Command lines for common agent CLIs, each reading the prompt on stdin."""

# Keys that mark stdout as an agent CLI's envelope rather than the answer itself:
# a skill whose answer happens to have a "result" field must not be unwrapped.
_CLAUDE_MARKERS = frozenset({"usage", "total_cost_usd", "cost_usd", "type", "session_id",
                             "is_error", "num_turns", "duration_ms"})
_ROLE = re.compile(r"^[a-z][a-z0-9_]*$")
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)```", re.DOTALL)
_MAX_DECODE_ATTEMPTS = 200


@dataclass(frozen=True)
class EngineReply:
    """What one engine call produced.

    ``text`` is the answer with any envelope removed; ``raw`` is stdout exactly
    as printed. When ``ok`` is False, ``reason`` says why in one line.
    """

    ok: bool
    text: str
    raw: str
    reason: str | None = None
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    stderr: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    could_not_start: bool = False
    """The engine never ran (fork failed, no shell, the shell found no such program or could not
    execute it: exit 127 or 126 with the shell's message): the machinery failed, not the engine."""
    hidden_writes: tuple[str, ...] = ()
    """Files a contained engine wrote where they were hidden from it (the writes were discarded)."""


def expand_engine(command: str) -> str:
    """A preset name becomes its command line; anything else is already a command.

    Example:
        >>> expand_engine("claude")
        'claude -p --output-format json'
        >>> expand_engine("python3 stub.py")
        'python3 stub.py'
    """
    stripped = command.strip()
    return ENGINE_PRESETS.get(stripped, stripped)


def engine_label(command: str, *, labels: Mapping[str, str] | None = None, workspace: Path | str | None = None,
                 home: Path | str | None = None) -> str:
    """How the history and reports name an engine: its configured name (``engines.labels``), its preset,
    else its command line with the workspace folder written ``.`` and the home folder ``~``, so copies
    of one project that sprint with one engine file their figures under one name.

    Example:
        >>> engine_label("claude -p --output-format json")
        'claude'
        >>> engine_label("python3 /opt/a.py", labels={"engine-a": "python3 /opt/a.py"})
        'engine-a'
        >>> engine_label("python3 /home/ann/ws-3/fix.py --key /home/ann/k", workspace="/home/ann/ws-3",
        ...              home="/home/ann")
        'python3 ./fix.py --key ~/k'
    """
    expanded = expand_engine(command)
    for name, configured in (labels or {}).items():
        if expand_engine(configured) == expanded:
            return name
    for name, preset in ENGINE_PRESETS.items():
        if preset == expanded:
            return name
    shortened = expanded
    for folder, short in ((workspace, "."), (home if home is not None else Path.home(), "~")):
        text = str(folder).rstrip("/") if folder is not None else ""
        if len(text) > 1:  # never "/": that would rewrite every absolute path
            shortened = re.sub(re.escape(text) + r"(?=/|\s|$|[\"'])", short, shortened)
    return shortened


def resolve_engine(role: str, explicit: str | None = None, config: Any = None,
                   environ: Mapping[str, str] | None = None, flag: str = "--engine",
                   settings: Settings | None = None) -> str:
    """The command line ``role`` runs, by precedence: flag, role env, global env, config.

    ``config`` is the project's ``EngineConfig`` (or a mapping of role to command);
    a role the model does not name, such as ``scorer``, may still be set there as
    an extra key. ``flag`` is how the caller's user gives ``explicit`` (the CLI's
    ``--engine``, a deployment form's field), named in the error.

    Raises:
        ConfigError: no source names an engine for ``role``.

    Example:
        >>> resolve_engine("scorer", environ={"SPRINTFLOW_ENGINE": "codex"})
        'codex exec -'
    """
    if not _ROLE.match(role):
        raise ValueError(f"invalid engine role {role!r}")
    if settings is None:
        settings = get_settings() if environ is None else Settings.of(environ)
    candidates = [(flag, explicit), settings.engine_of(role), (f"engines.{role}", _config_engine(config, role))]
    for source, value in candidates:
        if value is None:
            continue
        if not value.strip():
            raise ConfigError(f"{source} is set but empty: it must name an engine command or preset")
        return expand_engine(value)
    give = f"pass {flag} CMD" if flag.startswith("--") else f"fill in {flag}"
    raise ConfigError(
        f"no engine for the {role}: {give}, set SPRINTFLOW_{role.upper()}_ENGINE or "
        f"SPRINTFLOW_ENGINE, or set engines.{role} in sprintflow.toml "
        f"(presets: {', '.join(sorted(ENGINE_PRESETS))})")


def _config_engine(config: Any, role: str) -> str | None:
    if config is None:
        return None
    if isinstance(config, Mapping):
        value = config.get(role)
    else:
        value = getattr(config, role, None)
        if value is None:
            value = (getattr(config, "model_extra", None) or {}).get(role)
    return value if isinstance(value, str) else None


def engine_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment an engine runs with: ours, unscrubbed, plus ``extra``.

    Code under test gets a scrubbed environment, but an engine is a tool the
    user configured on purpose and usually needs its API key
    (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY`` …), so it sees everything we see.

    Example:
        >>> engine_env({"SPRINTFLOW_ROLE": "scorer"})["SPRINTFLOW_ROLE"]
        'scorer'
    """
    env = dict(os.environ)
    env.update(extra or {})
    return env


def run_engine(command: str, prompt: str, *, cwd: Path | str, timeout: float = DEFAULT_ENGINE_TIMEOUT,
               env: Mapping[str, str] | None = None, output_limit: int = 1_000_000,
               contain: Containment | None = None) -> EngineReply:
    """Send ``prompt`` on stdin to the engine ``command`` run in ``cwd``; never raises for its failures.

    A non-zero exit, a timeout, empty output or an envelope that reports an error
    give ``ok=False`` with the reason and the raw output kept.

    Example:
        >>> run_engine("tr a-z A-Z", "hello", cwd=".", timeout=10).text
        'HELLO'
    """
    result = run_command(expand_engine(command), cwd=cwd, timeout=timeout,
                         env=engine_env() if env is None else env,
                         stdin=prompt.encode("utf-8"), output_limit=output_limit, shell=True, contain=contain)
    common: dict[str, Any] = {"raw": result.stdout, "exit_code": result.exit_code, "timed_out": result.timed_out,
                              "duration_s": result.duration_s, "stderr": result.stderr,
                              "hidden_writes": tuple(result.hidden_writes)}
    if result.error is not None or result.exit_code is None:
        return EngineReply(ok=False, text="", reason=result.error or "engine did not start",
                           could_not_start=True, **common)
    if result.timed_out:
        return EngineReply(ok=False, text="", reason=f"engine timed out after {timeout:g}s", **common)
    if _shell_could_not_run(result.exit_code, result.stderr):
        return EngineReply(ok=False, text="", could_not_start=True, **common,
                           reason=f"engine could not start (exit {result.exit_code}): {_last_line(result.stderr)}")
    if result.exit_code != 0:
        reason = f"engine exited with code {result.exit_code}"
        last = _last_line(result.stderr)
        return EngineReply(ok=False, text="", reason=f"{reason}: {last}" if last else reason, **common)
    parsed = parse_engine_output(result.stdout)
    if parsed["error"]:
        return EngineReply(ok=False, text=parsed["text"], reason=parsed["error"], **_usage(parsed), **common)
    if not parsed["text"].strip():
        return EngineReply(ok=False, text="", reason="engine printed no answer", **_usage(parsed), **common)
    return EngineReply(ok=True, text=parsed["text"], **_usage(parsed), **common)


_SHELL_REFUSED = re.compile(r"not found|No such file or directory|Permission denied|cannot execute", re.IGNORECASE)
_SCRIPT_UNOPENED = {
    # An interpreter that could not open the script it was given, in its own words and with its own code.
    2: re.compile(r"^\S*python[\d.]*: can't open file .+: \[Errno \d+\]"       # python3 engine.py
                  r"|^\S*sh: \d+: cannot open .+: (No such file|Permission denied)", re.MULTILINE),  # sh engine.sh
    1: re.compile(r"^Error: Cannot find module '[^']+'\n(?:\s+at .+\n)*.*\n?\s*code: 'MODULE_NOT_FOUND',\n"
                  r"\s*requireStack: \[\]", re.MULTILINE),                         # node engine.js: the entry itself
}


def _shell_could_not_run(exit_code: int, stderr: str) -> bool:
    """The shell's own codes for a command it could not run (127 not found, 126 not executable), said
    on its last line of stderr, or an interpreter that could not open its script: no engine read the
    prompt, so no iteration was spent on it.

    Example:
        >>> _shell_could_not_run(127, "sh: 1: claud: not found")
        True
        >>> _shell_could_not_run(1, "sh: 1: claud: not found")
        False
        >>> _shell_could_not_run(2, "/usr/bin/python3: can't open file '/w/e.py': [Errno 2] No such file or directory")
        True
        >>> _shell_could_not_run(2, "engine: error: unrecognized arguments: --fast")
        False
    """
    if exit_code in (126, 127):
        return bool(_SHELL_REFUSED.search(_last_line(stderr)))
    pattern = _SCRIPT_UNOPENED.get(exit_code)
    return pattern is not None and bool(pattern.search(stderr.replace("\r\n", "\n")))


def _usage(parsed: dict[str, Any]) -> dict[str, Any]:
    return {k: parsed[k] for k in ("input_tokens", "output_tokens", "cost_usd")}


def _last_line(text: str, limit: int = 200) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""


def parse_engine_output(stdout: str) -> dict[str, Any]:
    """Split an engine's stdout into the answer text, usage, cost and any reported error.

    Recognises Claude Code's ``--output-format json`` envelope
    (``result``, ``usage``, ``total_cost_usd``/``cost_usd``, ``is_error``) and
    Gemini CLI's (``response``, ``stats``, ``error``); anything else is the answer as is.

    Example:
        >>> parse_engine_output('{"type": "result", "result": "hi", "total_cost_usd": 0.01}')["text"]
        'hi'
    """
    out: dict[str, Any] = {"text": stdout, "input_tokens": None, "output_tokens": None,
                           "cost_usd": None, "error": None}
    stripped = stdout.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return out
    try:
        data = loads_json(stripped)
    except ValueError:  # not JSON, or JSON we will not read (too deep, huge numbers): the answer as is
        return out
    if not isinstance(data, dict):
        return out
    if isinstance(data.get("result"), str) and _CLAUDE_MARKERS & data.keys():
        out["text"] = data["result"]
        usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
        out["input_tokens"] = _int(usage.get("input_tokens"))
        out["output_tokens"] = _int(usage.get("output_tokens"))
        cost = data.get("total_cost_usd", data.get("cost_usd"))
        out["cost_usd"] = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None
        if data.get("is_error") is True:
            out["error"] = f"engine reported an error: {_last_line(data['result']) or data.get('subtype', '')}"
    elif "response" in data and ("stats" in data or "error" in data):
        out["text"] = data["response"] if isinstance(data.get("response"), str) else ""
        models = (data.get("stats") or {}).get("models") or {}
        tokens: list[dict[str, Any]] = [m["tokens"] for m in models.values()
                                        if isinstance(m, dict) and isinstance(m.get("tokens"), dict)]
        if tokens:
            out["input_tokens"] = sum(_int(t.get("prompt")) or 0 for t in tokens)
            out["output_tokens"] = sum(_int(t.get("candidates")) or 0 for t in tokens)
        if data.get("error"):
            error = data["error"]
            message = error.get("message") if isinstance(error, dict) else str(error)
            out["error"] = f"engine reported an error: {message}"
    return out


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def extract_json(text: str, prefer: Iterable[str] = ()) -> dict[str, Any] | None:
    """Find the answer's JSON object in ``text``: bare, fenced, or wrapped in prose.

    Candidates are the whole text, then fenced blocks, then objects embedded in
    prose; the first one that has any of the ``prefer`` keys wins, else the first.
    None when the text holds no JSON object.

    Example:
        >>> extract_json('Sure!\\n```json\\n{"escalate": true}\\n```')
        {'escalate': True}
        >>> extract_json("I would not escalate this.") is None
        True
    """
    stripped = text.strip()
    candidates: list[dict[str, Any]] = []
    whole = _loads_object(stripped)
    if whole is not None:
        candidates.append(whole)
    else:
        for match in _FENCE.finditer(text):
            found = _loads_object(match.group(1).strip())
            if found is not None:
                candidates.append(found)
        if not candidates:
            candidates.extend(_embedded_objects(text))
    wanted = set(prefer)
    for candidate in candidates:
        if wanted & candidate.keys():
            return candidate
    return candidates[0] if candidates else None


def _loads_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = loads_json(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _embedded_objects(text: str) -> Iterator[dict[str, Any]]:
    decoder = json.JSONDecoder()
    position, attempts = text.find("{"), 0
    # Bounded: a long answer full of braces must not turn the scan quadratic.
    while position != -1 and attempts < _MAX_DECODE_ATTEMPTS:
        attempts += 1
        try:
            value, end = decoder.raw_decode(text, position)
            shallow(value)
        except (ValueError, RecursionError):  # not JSON here; or too deep, or a huge number: skip it
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            yield value
        position = text.find("{", end)
