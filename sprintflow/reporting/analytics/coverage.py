"""How each criterion is verified (automatically or by hand), and whether it was ever exercised or passing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals
from sprintflow.reporting.analytics.rates import _COUNTS
from sprintflow.reporting.analytics.rows import _of_kind

__all__ = [
    "coverage_summary",
    "criteria_coverage",
]


def criteria_coverage(evals: Evals) -> pd.DataFrame:
    """How each criterion was verified and whether it was ever exercised or passing.

    ``automatic`` is False for ``manual`` criteria and empty when the method is unknown.
    ``exercised`` means it once passed or failed (not only skipped).

    Returns:
        ``contract_id, criterion, method, required, evaluations, passed, failed, skipped,
        automatic, exercised, ever_passed``.
    """
    rows, source = _of_kind(evals, "criterion", "contract_id, name AS criterion, method, required, result, _row")
    # The method and requirement are the criterion's last result that says them.
    table = source.query(f"""
        SELECT contract_id, criterion, arg_max(method, _row) FILTER (WHERE method IS NOT NULL) AS method,
               arg_max(required, _row) FILTER (WHERE required IS NOT NULL) AS required, count(*) AS evaluations,
               {_COUNTS}
        FROM ({rows}) WHERE contract_id IS NOT NULL AND criterion IS NOT NULL GROUP BY ALL ORDER BY ALL""")
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
