"""Score a skill prompt against its held-out cases: validate, ask the engine, compare, report.

The logic of ``sprintflow score`` as plain functions; ``flows/score.py`` runs
the same functions as Prefect tasks. One run goes:

1. ``prepare_run`` checks everything before any engine is called: the skill
   name, the prompt, the comparator and every line of the cases file (streamed;
   each problem named by file and line). Bad input is a ``DocumentError`` /
   ``InputError`` (exit 2), never a failed case.
2. ``score_cases`` streams the cases again and runs them on a bounded thread
   pool; each ``score_case`` builds the prompt (skill prompt, then
   ``## Pre-fetched PR context``, then the case input), calls the engine, finds
   the answer's JSON and compares the skill's fields. A mismatch, an
   unparseable answer, a non-zero exit or a timeout is a failed case with its
   reason and the raw answer kept. Only an engine that could not even start
   raises (``InfrastructureError``): the machinery failed, not the skill.
3. ``build_report`` orders results as the file does, so identical engine
   answers give an identical report apart from its ``timing`` section;
   ``persist_report`` writes it and appends a history row.

With ``epochs=K`` every case runs K times (inspect_ai's epochs: the standard
answer to an engine that answers differently from one call to the next);
``merge_epochs`` folds the K verdicts of each case into one, with the pass@k
figures defined there.

The cases file is only ever opened for reading.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sprintflow.engines import engine_env, extract_json, resolve_engine, run_engine
from sprintflow.errors import DocumentError, InfrastructureError, InputError, Problem
from sprintflow.io.documents import loads_json, read_json
from sprintflow.io.files import append_ndjson, atomic_write_text
from sprintflow.io.git import head_sha
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas._base import utc_now
from sprintflow.schemas.scoring import (
    CaseDifference,
    CaseResult,
    ComparatorConfig,
    CompareReport,
    EpochResult,
    EvalCase,
    McNemarResult,
    PromptScore,
    ScoreHistoryRow,
    ScoreMode,
    ScoreReport,
    ScoreTiming,
    ScoreUsage,
    Verdict,
)

__all__ = [
    "CONTEXT_HEADING",
    "DEFAULT_CASE_TIMEOUT",
    "MAX_EPOCHS",
    "SKILL_COMPARATORS",
    "ScoreRun",
    "build_prompt",
    "build_report",
    "compare_answer",
    "compare_prompts",
    "compare_reports",
    "extract_json",
    "iter_cases",
    "load_comparator",
    "load_prompt",
    "mcnemar_exact",
    "merge_epochs",
    "parse_case_line",
    "pass_at_k",
    "pass_hat_k",
    "persist_compare_report",
    "persist_report",
    "prepare_run",
    "report_rows",
    "scan_cases",
    "score_case",
    "score_cases",
    "score_epochs",
    "score_skill",
    "with_prompt",
]

CONTEXT_HEADING = "## Pre-fetched PR context"
DEFAULT_CASE_TIMEOUT = 300.0
SKILL_COMPARATORS: dict[str, ComparatorConfig] = {
    "triage": ComparatorConfig(fields=["escalate", "risk"]),
}
"""Built-in comparators of known skills; ``evals/<skill>/comparator.json`` overrides them."""

RAW_LIMIT = 8000
"""Characters of a failed case's raw answer kept in the report (head and tail)."""
MAX_PROBLEMS = 50
MAX_EPOCHS = 100
"""The most times ``--epochs`` runs each case."""
_SKILL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class ScoreRun:
    """Everything one scoring run needs, validated before any engine is called."""

    skill: str
    root: Path
    cases_path: Path
    cases_file: str
    """The cases path as reports show it: relative to ``root`` when inside it."""
    cases_sha256: str
    total: int
    prompt_path: Path
    prompt_file: str
    prompt: str
    prompt_sha256: str
    comparator: ComparatorConfig
    engine: str
    timeout: float = DEFAULT_CASE_TIMEOUT


# --------------------------------------------------------------------------- input


def prepare_run(skill: str | None, *, root: Path | str = ".", cases: Path | str | None = None,
                prompt: Path | str | None = None, engine: str | None = None,
                timeout: float = DEFAULT_CASE_TIMEOUT, environ: Mapping[str, str] | None = None) -> ScoreRun:
    """Validate a scoring run: skill, prompt, comparator, every case line, and the engine.

    Relative ``cases`` / ``prompt`` paths are taken from ``root``; the defaults are
    ``evals/<skill>/cases.jsonl`` and ``prompts/<skill>.md``. The engine is
    resolved for the ``scorer`` role (``--engine`` > ``SPRINTFLOW_SCORER_ENGINE``
    > ``SPRINTFLOW_ENGINE`` > ``engines.scorer`` in the project config).

    Raises:
        InputError: no or an unusable skill name.
        DocumentError: a missing or empty file, or every bad case line (file:line: problem).
        ConfigError: no engine is configured.

    Example:
        >>> run = prepare_run("triage", root="examples/scoring", engine="python3 stub_engine.py")
        >>> run.total, run.comparator.fields
        (8, ['escalate', 'risk'])
    """
    if not skill:
        raise InputError("no skill given: usage: sprintflow score SKILL (e.g. sprintflow score triage)")
    if not _SKILL.match(skill):
        raise InputError(f"invalid skill name {skill!r}: use letters, digits, '.', '_' and '-' only")
    root = Path(root)
    cases_path = _under(root, cases if cases is not None else Path("evals") / skill / "cases.jsonl")
    prompt_path = _under(root, prompt if prompt is not None else Path("prompts") / f"{skill}.md")
    cases_file, prompt_file = _display(cases_path, root), _display(prompt_path, root)
    if not cases_path.is_file():
        raise DocumentError([Problem(cases_file, None, f"no cases file for skill {skill!r}")])
    prompt_text = load_prompt(prompt_path, prompt_file)
    comparator = load_comparator(skill, cases_path)
    total, sha = scan_cases(cases_path, comparator, cases_file, skill=skill)
    if engine is None and environ is None:
        engines = _config_engines(root)
    else:
        engines = None
    command = resolve_engine("scorer", engine, engines, environ)
    return ScoreRun(skill=skill, root=root, cases_path=cases_path, cases_file=cases_file, cases_sha256=sha,
                    total=total, prompt_path=prompt_path, prompt_file=prompt_file, prompt=prompt_text,
                    prompt_sha256=hashlib.sha256(prompt_text.encode("utf-8")).hexdigest(),
                    comparator=comparator, engine=command, timeout=timeout)


def _config_engines(root: Path) -> Any:
    """The project's ``engines`` config, or None when there is no config loader or file."""
    try:
        from sprintflow.evaluate.config import find_config_file, load_project_config
    except ImportError:  # the config loader is optional for scoring
        return None
    if not root.is_dir() or find_config_file(root) is None:
        return None
    return load_project_config(root).engines


def _under(root: Path, path: Path | str) -> Path:
    path = Path(path)
    return path if path.is_absolute() else root / path


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def load_prompt(path: Path, shown: str | None = None) -> str:
    """Read a skill prompt; a missing, unreadable or empty prompt is a ``DocumentError``.

    Example:
        >>> load_prompt(Path("examples/scoring/prompts/triage.md")).startswith("You triage")
        True
    """
    shown = shown or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DocumentError([Problem(shown, None, "no prompt file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError([Problem(shown, None, f"cannot read the prompt: {exc}")]) from None
    if not text.strip():
        raise DocumentError([Problem(shown, None, "the prompt is empty")])
    return text


def load_comparator(skill: str, cases_path: Path) -> ComparatorConfig:
    """The comparator for ``skill``: ``comparator.json`` beside the cases, else built-in, else all fields.

    Example:
        >>> load_comparator("triage", Path("evals/triage/cases.jsonl")).fields
        ['escalate', 'risk']
    """
    path = cases_path.parent / "comparator.json"
    if not path.is_file():
        return SKILL_COMPARATORS.get(skill, ComparatorConfig())
    data = read_json(path)
    try:
        config = ComparatorConfig.model_validate(data)
    except ValidationError as exc:
        raise DocumentError([Problem(str(path), "/".join(str(p) for p in err["loc"]), err["msg"])
                             for err in exc.errors()]) from None
    negative = [name for name, tol in config.tolerance.items() if tol < 0]
    if negative:
        raise DocumentError([Problem(str(path), f"tolerance/{name}", "must be >= 0") for name in negative])
    return config


def parse_case_line(raw: bytes, number: int, file: str,
                    comparator: ComparatorConfig | None = None, skill: str = "") -> EvalCase:
    """Parse one line of a cases file into an ``EvalCase``; every problem names ``file:number``.

    Raises:
        DocumentError: the line is not JSON, not an object, or lacks a usable
            ``id``, ``input`` or ``expected`` (or ``expected`` names none of the
            fields the comparator checks).

    Example:
        >>> parse_case_line(b'{"id": 1, "input": "diff", "expected": {"escalate": true}}', 1, "c.jsonl").id
        1
    """
    where = f"{file}:{number}"
    try:
        # Without its newline, so a truncated line's error points at its column, not "line 2".
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
        data = loads_json(text)
    except UnicodeDecodeError as exc:
        raise DocumentError([Problem(where, None, f"not UTF-8: {exc.reason} at byte {exc.start}")]) from None
    except ValueError as exc:
        raise DocumentError([Problem(where, None, str(exc).replace("at line 1 column", "at column"))]) from None
    if not isinstance(data, dict):
        raise DocumentError([Problem(where, None, "a case must be a JSON object with id, input and expected")])
    problems = []
    case_id = data.get("id")
    if "id" not in data:
        problems.append(Problem(where, "id", "missing"))
    elif isinstance(case_id, bool) or not isinstance(case_id, (str, int)) or case_id == "":
        problems.append(Problem(where, "id", "must be a non-empty string or an integer"))
    if "input" not in data:
        problems.append(Problem(where, "input", "missing"))
    expected = data.get("expected")
    if "expected" not in data:
        problems.append(Problem(where, "expected", "missing: a case needs the expected answer fields"))
    elif not isinstance(expected, dict) or not expected:
        problems.append(Problem(where, "expected", "must be a JSON object naming at least one field"))
    elif comparator is not None and not comparator.fields_for(expected):
        problems.append(Problem(where, "expected", f"names none of the fields {skill or 'the skill'} "
                                                   f"compares ({', '.join(comparator.fields)})"))
    if problems:
        raise DocumentError(problems)
    # Checked above: both keys are present and usable.
    return EvalCase(id=data["id"], input=data["input"], expected=data["expected"], line=number)


def _case_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    # "rb": read-only, and bytes so the hash sees exactly what is on disk.
    with path.open("rb") as handle:
        yield from enumerate(handle, start=1)


def scan_cases(path: Path, comparator: ComparatorConfig | None = None, shown: str | None = None,
               *, skill: str = "") -> tuple[int, str]:
    """Check every line of a cases file in one streamed pass; return (case count, sha256).

    Collects every problem (up to 50) rather than stopping at the first, and
    reports duplicate ids with both line numbers.

    Raises:
        DocumentError: any malformed line, duplicate id, or a file without cases.

    Example:
        >>> scan_cases(Path("examples/scoring/evals/triage/cases.jsonl"))[0]
        8
    """
    shown = shown or str(path)
    digest = hashlib.sha256()
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    extra = total = 0
    try:
        for number, raw in _case_lines(path):
            digest.update(raw)
            if not raw.strip():
                continue
            try:
                case = parse_case_line(raw, number, shown, comparator, skill)
            except DocumentError as exc:
                found = exc.problems
            else:
                key = str(case.id)
                if key in seen:
                    found = [Problem(f"{shown}:{number}", "id",
                                     f"duplicate id {case.id!r} (first on line {seen[key]})")]
                else:
                    seen[key] = number
                    total += 1
                    continue
            room = MAX_PROBLEMS - len(problems)
            problems.extend(found[:room])
            extra += max(0, len(found) - room)
    except OSError as exc:
        raise DocumentError([Problem(shown, None, f"cannot read the cases: {exc}")]) from None
    if extra:
        problems.append(Problem(shown, None, f"... and {extra} more problems"))
    if problems:
        raise DocumentError(problems)
    if not total:
        raise DocumentError([Problem(shown, None, "no cases: the file has no case lines")])
    return total, digest.hexdigest()


def iter_cases(path: Path, *, expect_sha256: str | None = None, shown: str | None = None) -> Iterator[EvalCase]:
    """Stream the cases of a file, one line at a time, in file order.

    With ``expect_sha256`` (from ``scan_cases``), a file that changed since it was
    checked raises at the end instead of yielding a report for a different case set.

    Example:
        >>> [case.id for case in iter_cases(Path("examples/scoring/evals/triage/cases.jsonl"))][:2]
        ['pr-101', 'pr-102']
    """
    shown = shown or str(path)
    digest = hashlib.sha256()
    for number, raw in _case_lines(path):
        digest.update(raw)
        if raw.strip():
            yield parse_case_line(raw, number, shown)
    if expect_sha256 is not None and digest.hexdigest() != expect_sha256:
        raise DocumentError([Problem(shown, None, "the cases file changed while it was being scored")])


# --------------------------------------------------------------------------- one case


def build_prompt(skill_prompt: str, case_input: Any) -> str:
    """The text sent to the engine: the skill prompt, the context heading, the case input.

    A non-string input is rendered as indented JSON.

    Example:
        >>> build_prompt("Triage this PR.", "diff --git a/x b/x")
        'Triage this PR.\\n\\n## Pre-fetched PR context\\n\\ndiff --git a/x b/x\\n'
    """
    body = case_input if isinstance(case_input, str) else json.dumps(case_input, indent=2, ensure_ascii=False)
    return f"{skill_prompt.rstrip()}\n\n{CONTEXT_HEADING}\n\n{body.strip()}\n"


def _json_equal(a: Any, b: Any) -> bool:
    # Python says True == 1 and 1 == 1.0; JSON answers must match in kind as well.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _field_equal(name: str, expected: Any, actual: Any, comparator: ComparatorConfig) -> bool:
    if name in comparator.case_insensitive and isinstance(expected, str) and isinstance(actual, str):
        return expected.casefold() == actual.casefold()
    if name in comparator.tolerance and _is_number(expected) and _is_number(actual):
        # The epsilon absorbs float rounding so 0.3 within 0.1 of 0.2 passes as written.
        return abs(expected - actual) <= comparator.tolerance[name] + 1e-12
    return _json_equal(expected, actual)


def compare_answer(expected: dict[str, Any], answer: dict[str, Any],
                   comparator: ComparatorConfig) -> tuple[dict[str, Any], list[str]]:
    """Compare the comparator's fields; return (the answer's values, one message per mismatch).

    Example:
        >>> compare_answer({"risk": "high"}, {"risk": "low", "why": "…"}, ComparatorConfig(fields=["risk"]))
        ({'risk': 'low'}, ['risk: expected "high", got "low"'])
    """
    actual: dict[str, Any] = {}
    mismatches: list[str] = []
    for name in comparator.fields_for(expected):
        if name not in answer:
            mismatches.append(f"{name}: missing from the answer")
            continue
        actual[name] = answer[name]
        if not _field_equal(name, expected[name], answer[name], comparator):
            mismatches.append(f"{name}: expected {_show(expected[name])}, got {_show(answer[name])}")
    return actual, mismatches


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cap(text: str, limit: int = RAW_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters dropped ...]\n{text[-half:]}"


def score_case(run: ScoreRun, case: EvalCase, env: Mapping[str, str] | None = None) -> CaseResult:
    """Ask the engine about one case and judge its answer; a bad answer is a failed case.

    Raises:
        InfrastructureError: the engine process could not be started at all.
    """
    fields = run.comparator.fields_for(case.expected)
    expected = {name: case.expected[name] for name in fields}
    reply = run_engine(run.engine, build_prompt(run.prompt, case.input), cwd=run.root,
                       timeout=run.timeout, env=env)
    if reply.could_not_start:
        raise InfrastructureError(f"case {case.id!r}: the engine could not start: {reply.reason}")
    usage: dict[str, Any] = {"duration_s": reply.duration_s, "input_tokens": reply.input_tokens,
                             "output_tokens": reply.output_tokens, "cost_usd": reply.cost_usd}
    if not reply.ok:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=None, reason=reply.reason,
                          raw=_cap(reply.raw), **usage)
    answer = extract_json(reply.text, prefer=fields)
    if answer is None:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=None,
                          reason="unparseable answer: no JSON object found", raw=_cap(reply.raw), **usage)
    actual, mismatches = compare_answer(case.expected, answer, run.comparator)
    if mismatches:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=actual,
                          reason="; ".join(mismatches), raw=_cap(reply.raw), **usage)
    return CaseResult(id=case.id, passed=True, expected=expected, actual=actual, **usage)


# --------------------------------------------------------------------------- many cases


def score_cases(run: ScoreRun, cases: Iterable[EvalCase] | None = None, *, concurrency: int = 8,
                env: Mapping[str, str] | None = None) -> list[CaseResult]:
    """Score ``cases`` (default: streamed from the run's file) with at most ``concurrency`` engines at once.

    Results come back in case order. Cases are read as the pool frees up, so a
    huge file is never held in memory at once, only its results.

    Raises:
        InfrastructureError: an engine could not start; the remaining cases are cancelled.
    """
    return score_epochs(run, cases, concurrency=concurrency, env=env)[0]


def score_epochs(run: ScoreRun, cases: Iterable[EvalCase] | None = None, *, epochs: int = 1,
                 concurrency: int = 8, env: Mapping[str, str] | None = None) -> list[list[CaseResult]]:
    """Score every case ``epochs`` times; results per epoch, each in case order.

    The K calls of one case are queued together, so a case's epochs run side by
    side and the file is still read once, one line at a time.

    Raises:
        InputError: ``epochs`` is not between 1 and 100.
        InfrastructureError: an engine could not start; the remaining cases are cancelled.
    """
    if not 1 <= epochs <= MAX_EPOCHS:
        raise InputError(f"--epochs must be between 1 and {MAX_EPOCHS}, got {epochs}")
    if cases is None:
        cases = iter_cases(run.cases_path, expect_sha256=run.cases_sha256, shown=run.cases_file)
    results = _run_jobs(((run, case) for case in cases for _ in range(epochs)), concurrency, env)
    return [results[epoch::epochs] for epoch in range(epochs)]


def _run_jobs(jobs: Iterable[tuple[ScoreRun, EvalCase]], concurrency: int,
              env: Mapping[str, str] | None) -> list[CaseResult]:
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")
    env = engine_env() if env is None else env  # copied once, not once per case
    results: dict[int, CaseResult] = {}
    failures: list[BaseException] = []
    # Enough queued work to keep every worker busy, never the whole file. A semaphore
    # released by the worker costs O(1) per case, unlike wait() over every pending future.
    slots = threading.BoundedSemaphore(concurrency * 4)

    def work(index: int, run: ScoreRun, case: EvalCase) -> None:
        try:
            results[index] = score_case(run, case, env)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread below
            failures.append(exc)
        finally:
            slots.release()

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sprintflow-score")
    submitted = 0
    try:
        for index, (run, case) in enumerate(jobs):
            slots.acquire()
            if failures:
                break
            pool.submit(work, index, run, case)
            submitted += 1
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # bad input or Ctrl-C: stop queued cases
        raise
    # Queued cases still run; only a failure cancels what has not started.
    pool.shutdown(wait=True, cancel_futures=bool(failures))
    if failures:
        raise failures[0]
    return [results[index] for index in range(submitted)]


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


# --------------------------------------------------------------------------- epochs


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimator (Chen et al. 2021, "Evaluating Large Language Models Trained on Code").

    With ``n`` samples of which ``c`` passed, the chance that at least one of ``k``
    samples drawn without replacement passes: ``1 - C(n-c, k) / C(n, k)``. For
    ``k = 1`` it is ``c / n``, the mean per-sample pass rate; for ``k = n`` it is
    1 when any sample passed, else 0.

    Example:
        >>> pass_at_k(5, 2, 1), pass_at_k(5, 2, 5), pass_at_k(5, 0, 5)
        (0.4, 1.0, 0.0)
        >>> round(pass_at_k(5, 2, 2), 4)
        0.7
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The pass^k estimator (Yao et al. 2024, tau-bench): the chance that all ``k`` of ``k`` samples pass.

    ``C(c, k) / C(n, k)``; for ``k = n`` it is 1 when every sample passed, else 0.
    It falls with k for an agent that is right only some of the time, which
    pass@k hides.

    Example:
        >>> pass_hat_k(5, 5, 5), pass_hat_k(5, 4, 5), round(pass_hat_k(5, 4, 2), 4)
        (1.0, 0.0, 0.6)
    """
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass^k needs 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return math.comb(c, k) / math.comb(n, k)


def merge_epochs(per_epoch: list[list[CaseResult]]) -> list[CaseResult]:
    """One result per case from K epochs (each a list in case order).

    For one epoch the results come back unchanged. For K > 1, with ``c`` of a
    case's K epochs passed (n = k = K in the estimators above):

    * ``passAt1 = c / K`` (pass@1, the mean per-sample pass rate),
    * ``passAtK`` = pass@K: 1.0 when any epoch passed,
    * ``passHatK`` = pass^K: 1.0 when every epoch passed,
    * ``stability``: ``always-pass``, ``always-fail`` or ``flaky``;

    and the case ``pass`` is pass^K, so a case that only sometimes passes fails
    (fail closed). ``actual``, ``reason`` and the raw answer of the first failed
    epoch stand for the case; every epoch stays in ``epochs``. Durations, tokens
    and cost add up over the epochs.

    Example:
        >>> ok = CaseResult(id="a", passed=True, expected={"risk": "low"})
        >>> bad = CaseResult(id="b", passed=False, expected={"risk": "low"}, reason="risk: got high")
        >>> merged = merge_epochs([[ok, bad], [ok, bad.model_copy(update={"passed": True, "reason": None})]])
        >>> [(case.stability, case.passed, case.pass_at_1) for case in merged]
        [('always-pass', True, 1.0), ('flaky', False, 0.5)]
        >>> merged[1].reason
        'failed 1 of 2 epochs; epoch 1: risk: got high'
    """
    if len(per_epoch) == 1:
        return per_epoch[0]
    return [_merge_case(list(samples)) for samples in zip(*per_epoch, strict=True)]


def _merge_case(samples: list[CaseResult]) -> CaseResult:
    k, c = len(samples), sum(sample.passed for sample in samples)
    failed = [(epoch, s) for epoch, s in enumerate(samples, start=1) if not s.passed]
    first_epoch, shown = failed[0] if failed else (1, samples[0])
    reason = f"failed {k - c} of {k} epochs; epoch {first_epoch}: {shown.reason}" if failed else None
    stability = "always-pass" if c == k else "always-fail" if c == 0 else "flaky"
    epochs = [EpochResult.model_validate({"epoch": epoch, "pass": s.passed, "actual": s.actual, "reason": s.reason,
                                          "raw": s.raw}) for epoch, s in enumerate(samples, start=1)]
    return CaseResult.model_validate({
        "id": shown.id, "pass": c == k, "expected": shown.expected, "actual": shown.actual, "reason": reason,
        "passes": c, "pass_at_1": pass_at_k(k, c, 1), "pass_at_k": pass_at_k(k, c, k),
        "pass_hat_k": pass_hat_k(k, c, k), "stability": stability, "epochs": epochs,
        "duration_s": sum(s.duration_s for s in samples),
        "input_tokens": _total(s.input_tokens for s in samples),
        "output_tokens": _total(s.output_tokens for s in samples),
        "cost_usd": _total(s.cost_usd for s in samples),
    })


def _epoch_totals(results: list[CaseResult]) -> dict[str, Any]:
    """The report's epoch fields: K and the three estimators averaged over cases; empty for one epoch."""
    if not results or results[0].epochs is None:
        return {}
    total = len(results)

    def mean(values: Iterable[float | None]) -> float:
        return sum(v or 0.0 for v in values) / total

    return {"epochs": len(results[0].epochs), "pass_at_1": mean(r.pass_at_1 for r in results),
            "pass_at_k": mean(r.pass_at_k for r in results), "pass_hat_k": mean(r.pass_hat_k for r in results)}


def build_report(run: ScoreRun, results: list[CaseResult], *, started_at: str, duration_s: float,
                 concurrency: int, mode: ScoreMode = "plain") -> ScoreReport:
    """Aggregate per-case results (in case order) into a ``ScoreReport``.

    ``results`` may come from :func:`merge_epochs`: the report then carries the
    epoch fields too.
    """
    passed = sum(1 for result in results if result.passed)
    total = len(results)
    usage = None
    reported = [r for r in results if r.input_tokens is not None or r.output_tokens is not None
                or r.cost_usd is not None]
    if reported:
        usage = ScoreUsage(
            input_tokens=_total(r.input_tokens for r in reported),
            output_tokens=_total(r.output_tokens for r in reported),
            cost_usd=_total(r.cost_usd for r in reported),
        )
    timing = ScoreTiming(started_at=started_at, finished_at=utc_now(), duration_s=round(duration_s, 3),
                         concurrency=concurrency, mode=mode,
                         cases={str(r.id): round(r.duration_s, 3) for r in results})
    return ScoreReport(skill=run.skill, total=total, passed=passed, failed=total - passed,
                       score=passed / total if total else 0.0, **_epoch_totals(results), cases=results,
                       engine=run.engine,
                       cases_file=run.cases_file, cases_sha256=run.cases_sha256, prompt_file=run.prompt_file,
                       prompt_sha256=run.prompt_sha256, comparator=run.comparator, usage=usage, timing=timing)


def _total(values: Iterable[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    return round(total, 6) if isinstance(total, float) else total


def score_skill(run: ScoreRun, *, concurrency: int = 8, persist: bool = True,
                env: Mapping[str, str] | None = None, epochs: int = 1) -> ScoreReport:
    """Score a prepared run without Prefect: the CLI's default path when no server is configured.

    Example:
        >>> run = prepare_run("triage", root="examples/scoring", engine="python3 stub_engine.py")
        >>> report = score_skill(run, epochs=3, persist=False)
        >>> report.passed, report.total, report.epochs
        (8, 8, 3)
    """
    started_at, clock = utc_now(), time.monotonic()
    results = merge_epochs(score_epochs(run, epochs=epochs, concurrency=concurrency, env=env))
    report = build_report(run, results, started_at=started_at, duration_s=time.monotonic() - clock,
                          concurrency=concurrency)
    if persist:
        persist_report(report, run.root)
    return report


# --------------------------------------------------------------------------- persistence


def persist_report(report: ScoreReport, root: Path | str, *, stamp: str | None = None,
                   comparison: str | None = None) -> Path:
    """Write ``.sprintflow/scores/<skill>/<stamp>.json`` atomically and append a history row.

    The row's shape is ``ScoreHistoryRow``. Returns the report's path.
    """
    root = Path(root)
    stamp = stamp or _stamp()
    path = WorkspaceLayout(root).scores_dir(report.skill) / f"{stamp}.json"
    atomic_write_text(path, report.to_json())
    timing = report.timing
    usage = report.usage or ScoreUsage()
    row = ScoreHistoryRow(
        recorded_at=utc_now(), skill=report.skill, total=report.total, passed=report.passed,
        failed=report.failed, score=report.score, failed_ids=report.failed_ids, engine=report.engine,
        cases_file=report.cases_file, cases_sha256=report.cases_sha256, prompt_file=report.prompt_file,
        prompt_sha256=report.prompt_sha256, git_sha=head_sha(root),
        mode=timing.mode if timing else "plain", concurrency=timing.concurrency if timing else 0,
        duration_s=timing.duration_s if timing else 0.0, input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens, cost_usd=usage.cost_usd,
        report=path.relative_to(root).as_posix(), comparison=comparison, **_epoch_history(report),
    )
    append_ndjson(WorkspaceLayout(root).scores_file, row.to_dict())
    return path


def _epoch_history(report: ScoreReport) -> dict[str, Any]:
    """The history row's epoch fields: the report's figures, each epoch's score, the flaky cases."""
    if report.epochs is None:
        return {}
    per_epoch = [0] * report.epochs
    for case in report.cases:
        for sample in case.epochs or []:
            per_epoch[sample.epoch - 1] += sample.passed
    return {"epochs": report.epochs, "pass_at_1": report.pass_at_1, "pass_at_k": report.pass_at_k,
            "pass_hat_k": report.pass_hat_k,
            "epoch_scores": [n / report.total if report.total else 0.0 for n in per_epoch],
            "flaky_ids": [case.id for case in report.cases if case.stability == "flaky"]}


def persist_compare_report(report: CompareReport, a: ScoreReport, b: ScoreReport, root: Path | str) -> Path:
    """Persist a comparison: both score reports (with history rows) and the comparison itself.

    Files share one stamp: ``<stamp>-a.json``, ``<stamp>-b.json``, ``<stamp>-compare.json``.
    """
    stamp = _stamp()
    persist_report(a, root, stamp=f"{stamp}-a", comparison=stamp)
    persist_report(b, root, stamp=f"{stamp}-b", comparison=stamp)
    path = WorkspaceLayout(Path(root)).scores_dir(report.skill) / f"{stamp}-compare.json"
    atomic_write_text(path, report.to_json())
    return path


def report_rows(report: ScoreReport, *, failed_only: bool = False) -> list[dict[str, Any]]:
    """Flat rows for a table (Prefect artifact, terminal): id, pass, expected, actual, reason.

    Over K > 1 epochs each row also has ``epochs`` (``"2/3"``: epochs passed of K) and ``stability``.
    """
    rows = []
    for case in report.cases:
        if failed_only and case.passed:
            continue
        row: dict[str, Any] = {"id": str(case.id), "pass": case.passed, "expected": _show(case.expected),
                               "actual": _show(case.actual) if case.actual is not None else "",
                               "reason": case.reason or ""}
        if report.epochs:
            row.update(epochs=f"{case.passes}/{report.epochs}", stability=case.stability)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- comparing prompts


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test (p = 0.5) on the discordant pairs.

    ``only_a`` cases passed with prompt A alone, ``only_b`` with B alone;
    cases both passed or both failed carry no information about which is better.

    Example:
        >>> round(mcnemar_exact(1, 9), 4)
        0.0215
        >>> mcnemar_exact(0, 0)
        1.0
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    # Exact integers until the one division, so large case sets do not lose precision.
    return min(1.0, 2 * tail / 2 ** n)


def compare_reports(a: ScoreReport, b: ScoreReport, *, alpha: float = 0.05,
                    timing: ScoreTiming | None = None) -> CompareReport:
    """Pair two reports over the same cases: per-case differences and the McNemar verdict.
    """
    if [c.id for c in a.cases] != [c.id for c in b.cases]:
        raise InputError("the two reports do not cover the same cases in the same order")
    differences = [
        CaseDifference(id=ca.id, a=ca.passed, b=cb.passed, expected=ca.expected, actual_a=ca.actual,
                       actual_b=cb.actual, reason_a=ca.reason, reason_b=cb.reason)
        for ca, cb in zip(a.cases, b.cases, strict=True) if ca.passed != cb.passed
    ]
    only_a = sum(1 for d in differences if d.a)
    only_b = len(differences) - only_a
    p_value = mcnemar_exact(only_a, only_b)
    verdict: Verdict
    if p_value < alpha and only_b > only_a:
        verdict = "b-better"
    elif p_value < alpha and only_a > only_b:
        verdict = "a-better"
    else:
        verdict = "no-significant-difference"
    both_passed = sum(1 for ca, cb in zip(a.cases, b.cases, strict=True) if ca.passed and cb.passed)
    return CompareReport(
        skill=a.skill, total=a.total,
        a=PromptScore(prompt_file=a.prompt_file, prompt_sha256=a.prompt_sha256, passed=a.passed,
                      failed=a.failed, score=a.score),
        b=PromptScore(prompt_file=b.prompt_file, prompt_sha256=b.prompt_sha256, passed=b.passed,
                      failed=b.failed, score=b.score),
        both_passed=both_passed, both_failed=a.total - both_passed - len(differences),
        mcnemar=McNemarResult(only_a_passed=only_a, only_b_passed=only_b, p_value=p_value, alpha=alpha,
                              verdict=verdict),
        differences=differences, engine=a.engine, cases_file=a.cases_file, cases_sha256=a.cases_sha256,
        timing=timing,
    )


def compare_prompts(run_a: ScoreRun, prompt_b: Path | str, *, concurrency: int = 8, persist: bool = True,
                    env: Mapping[str, str] | None = None) -> tuple[CompareReport, ScoreReport, ScoreReport]:
    """Score two prompt versions on the same cases in one pool and compare them.

    ``run_a`` is prepared with prompt A; B replaces only the prompt. Each case
    line is read once and sent to both.
    """
    run_b = with_prompt(run_a, prompt_b)
    started_at, clock = utc_now(), time.monotonic()
    cases = iter_cases(run_a.cases_path, expect_sha256=run_a.cases_sha256, shown=run_a.cases_file)
    results = _run_jobs(((run, case) for case in cases for run in (run_a, run_b)), concurrency, env)
    duration = time.monotonic() - clock
    a = build_report(run_a, results[0::2], started_at=started_at, duration_s=duration, concurrency=concurrency)
    b = build_report(run_b, results[1::2], started_at=started_at, duration_s=duration, concurrency=concurrency)
    comparison = compare_reports(a, b, timing=a.timing.model_copy(update={"cases": {}}) if a.timing else None)
    if persist:
        persist_compare_report(comparison, a, b, run_a.root)
    return comparison, a, b


def with_prompt(run: ScoreRun, prompt: Path | str) -> ScoreRun:
    """The same run with another prompt file (validated), for comparisons."""
    path = _under(run.root, prompt)
    shown = _display(path, run.root)
    text = load_prompt(path, shown)
    return replace(run, prompt_path=path, prompt_file=shown, prompt=text,
                   prompt_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest())
