"""How each criterion is verified (automatically or by hand), and whether it was ever exercised or passing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.reporting.analytics.rates import _outcome_counts
from sprintflow.reporting.analytics.rows import _kind

__all__ = [
    "coverage_summary",
    "criteria_coverage",
]


def criteria_coverage(evals: pd.DataFrame) -> pd.DataFrame:
    """How each criterion was verified and whether it was ever exercised or passing.

    ``automatic`` is False for ``manual`` criteria and empty when the method is unknown.
    ``exercised`` means it once passed or failed (not only skipped).

    Returns:
        ``contract_id, criterion, method, required, evaluations, passed, failed, skipped,
        automatic, exercised, ever_passed``.
    """
    rows = _kind(evals, "criterion", "contract_id", "name", "method", "required", "result")
    rows = rows.rename(columns={"name": "criterion"})
    keys = ["contract_id", "criterion"]
    table = _outcome_counts(rows, keys).drop(columns=["runs", "pass_rate", "ci_low", "ci_high"])
    grouped = rows.groupby(keys, sort=True)
    described = pd.DataFrame({"method": grouped["method"].last(), "required": grouped["required"].last(),
                              "evaluations": grouped.size()}).reset_index()
    table = described.merge(table, on=keys)
    method = table["method"]
    table["automatic"] = pd.array(np.where(method.isna(), None, method != "manual"), dtype="boolean")
    table["exercised"] = (table["passed"] + table["failed"]) > 0
    table["ever_passed"] = table["passed"] > 0
    return table


def coverage_summary(coverage: pd.DataFrame) -> pd.DataFrame:
    """Shares of criteria verified automatically vs manually, never exercised, never passing.

    "never passing" counts criteria that were exercised but never passed;
    "never exercised" ones were only ever skipped.

    Args:
        coverage: the output of :func:`criteria_coverage`.

    Returns:
        ``measure, criteria, share`` rows: automatic, manual, unknown method,
        never exercised, never passing.
    """
    automatic = coverage["automatic"]
    counts = {
        "automatic": int(automatic.eq(True).sum()),
        "manual": int(automatic.eq(False).sum()),
        "unknown method": int(automatic.isna().sum()),
        "never exercised": int((~coverage["exercised"]).sum()),
        "never passing": int((coverage["exercised"] & ~coverage["ever_passed"]).sum()),
    }
    total = len(coverage)
    return pd.DataFrame({"measure": list(counts), "criteria": list(counts.values()),
                         "share": [n / total if total else np.nan for n in counts.values()]})
