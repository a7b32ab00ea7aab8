"""The part of a command's output worth showing when no parser understood it.

A failed check whose output we cannot parse must still tell the generator what
the tool said: "`npm run lint` exited 1" alone leaves it guessing, although the
tool printed the file and the line. :func:`relevant_output` keeps the lines
around the first error and the closing summary, without colour codes, package
manager boilerplate or progress redraws, within a fixed budget.
"""

from __future__ import annotations

import re

from sprintflow.parsers._common import strip_ansi

__all__ = ["MAX_EXCERPT_CHARS", "MAX_EXCERPT_LINES", "combined_output", "relevant_output"]

MAX_EXCERPT_LINES = 40
MAX_EXCERPT_CHARS = 3000
_CONTEXT_BEFORE = 3
_TAIL_SHARE = 3  # a third of the budget goes to the end of the output, where summaries are

# `npm run` announces the script (`> pkg@1.0.0 lint`, then `> eslint .`): no news about the failure.
_SCRIPT_HEADER = re.compile(r"^> \S+@\S+ \S+")
# npm/pnpm/yarn lifecycle chatter after a failing script.
_BOILERPLATE = re.compile(
    r"^(?:npm (?:ERR!|error) (?:code ELIFECYCLE|errno|path|workspace|location|command|Lifecycle script|"
    r"A complete log|Failed at the|This is probably not|Exit status|\s*$)"
    r"|npm (?:ERR!|error) +(?:/|\S+@\S+ \S+:)"      # npm ERR! /root/.npm/_logs/… , pkg@1.0.0 lint: `…`
    r"|npm notice"
    r"|\u2009?ELIFECYCLE\s+Command failed"
    r"|info Visit https://yarnpkg.com"
    r"|error Command failed with exit code \d+\.$"
    r")")
_ERRORISH = re.compile(r"\b(?:error|Error|ERROR|FAIL|FAILED|Fail|failed|Traceback|Exception|fatal|FATAL|panic)\b"
                       r"|^E\s|✖|✘|×|❯ .+:\d+")


def combined_output(stdout: str, stderr: str) -> str:
    """stdout then stderr, as one text (tools split their report across both).

    Example:
        >>> combined_output("a\\n", "b")
        'a\\nb'
    """
    return "\n".join(part.rstrip("\n") for part in (stdout, stderr) if part.strip())


def relevant_output(text: str, max_lines: int = MAX_EXCERPT_LINES, max_chars: int = MAX_EXCERPT_CHARS) -> str:
    """The lines of ``text`` worth showing: around the first error, and the end.

    Colour codes and carriage-return redraws are removed, package-manager
    boilerplate and runs of blank lines are dropped. Short output comes back
    whole; long output keeps a window starting just before the first line that
    looks like an error, then ``…``, then the last lines (where runners print
    their summary). The result never exceeds ``max_chars``.

    Example:
        >>> print(relevant_output("> app@1.0.0 lint\\n> eslint .\\n\\nsrc/a.js: line 3, col 7, Error - 'x' is unused"
        ...                       "\\nnpm ERR! code ELIFECYCLE"))
        src/a.js: line 3, col 7, Error - 'x' is unused
    """
    lines = _clean_lines(text)
    if len(lines) > max_lines:
        lines = _window(lines, max_lines)
    return _bound("\n".join(lines).strip("\n"), max_chars)


def _clean_lines(text: str) -> list[str]:
    cleaned: list[str] = []
    in_header = False
    for raw in strip_ansi(text).replace("\r\n", "\n").split("\n"):
        line = raw.rsplit("\r", 1)[-1].rstrip()  # a progress bar redraws its line with \r
        in_header = bool(_SCRIPT_HEADER.match(line)) or (in_header and line.startswith("> "))
        if in_header or _BOILERPLATE.match(line.strip()):
            continue
        if not line.strip() and (not cleaned or not cleaned[-1].strip()):
            continue
        cleaned.append(line)
    while cleaned and not cleaned[-1].strip():
        cleaned.pop()
    return cleaned


def _window(lines: list[str], max_lines: int) -> list[str]:
    tail_size = max_lines // _TAIL_SHARE
    first_error = next((i for i, line in enumerate(lines) if _ERRORISH.search(line)), None)
    if first_error is None:
        return ["…", *lines[-max_lines:]]
    start = max(0, first_error - _CONTEXT_BEFORE)
    skipped = ["…"] if start else []
    if len(lines) - start <= max_lines:
        return [*skipped, *lines[start:]]
    return [*skipped, *lines[start:start + max_lines - tail_size], "…", *lines[-tail_size:]]


def _bound(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    keep_end = max_chars // _TAIL_SHARE
    keep_start = max_chars - keep_end - 3
    return f"{text[:keep_start].rstrip()}\n…\n{text[-keep_end:].lstrip()}"
