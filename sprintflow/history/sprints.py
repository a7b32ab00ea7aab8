"""What makes a sprint in the history: a workspace's contract in one sprint run.

A shared history (``SPRINTFLOW_HISTORY``) holds many workspaces, and a workspace runs a contract
again after needs-rework: counting by contract id alone would merge them. Every report figure
of sprints counts by :func:`sprint_ids` instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["SPRINT_KEYS", "sprint_ids"]

SPRINT_KEYS = ("workspace", "contract_id", "sprint_run")
"""The columns that make a sprint: a workspace's contract in one sprint run (its pin)."""


def sprint_ids(evals: pd.DataFrame) -> np.ndarray:
    """One integer per row naming its sprint (:data:`SPRINT_KEYS`), numbered in order of first appearance.

    A key column the frame lacks reads as empty; evaluations outside a sprint run (no
    ``sprint_run``) of one workspace's contract share one id. The same frame always gives
    the same ids, so tables computed from it can be joined on them.

    Example:
        >>> frame = pd.DataFrame({"workspace": ["/a", "/b", "/a", "/a"], "contract_id": "c",
        ...                       "sprint_run": ["pin-1", "pin-2", "pin-1", None]})
        >>> sprint_ids(frame).tolist()
        [0, 1, 0, 2]
    """
    codes = []
    for column in SPRINT_KEYS:
        if column in evals.columns:
            values = evals[column]
            code = values.cat.codes.to_numpy() if isinstance(values.dtype, pd.CategoricalDtype) \
                else pd.factorize(values.astype(object))[0]
            codes.append(code.astype(np.int64) + 1)  # null (-1) becomes a value of its own
    if not codes or len(evals) == 0:
        return np.zeros(len(evals), dtype=np.int64)
    combined = np.ravel_multi_index(codes, [int(code.max()) + 1 for code in codes])
    return pd.factorize(combined)[0].astype(np.int64)
