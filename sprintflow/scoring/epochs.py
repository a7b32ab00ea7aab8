"""K epochs of every case: the pass@k and pass^k estimators, and a case's K verdicts folded into one.

With ``epochs=K`` every case runs K times (inspect_ai's epochs: the standard answer to an engine
that answers differently from one call to the next); ``merge_epochs`` folds the K verdicts of each
case into one, with the pass@k figures defined there.
"""

from __future__ import annotations

import math

from sprintflow.schemas.scoring import CaseResult, EpochResult
from sprintflow.scoring.report import _total

__all__ = ["merge_epochs", "pass_at_k", "pass_hat_k"]


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
