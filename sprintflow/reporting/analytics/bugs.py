"""Bugs from ``bugs.ndjson`` events: opened, fixed and reopened per period, the time to each fix, the totals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.reporting.analytics.periods import period_start

__all__ = [
    "bug_activity",
    "bug_summary",
    "time_to_fix",
]


def bug_activity(bugs: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Bugs opened, fixed and reopened per period, from ``bugs.ndjson`` events.

    Returns:
        ``week, opened, fixed, reopened``.
    """
    frame = pd.DataFrame({
        "week": period_start(bugs["updated_at"], freq),
        "opened": (bugs["event"] == "open").astype(np.int64),
        "fixed": ((bugs["event"] == "transition") & (bugs["status"] == "fixed")).astype(np.int64),
        "reopened": (bugs["event"] == "reopen").astype(np.int64),
    })
    return frame.groupby("week").sum().reset_index()


def time_to_fix(bugs: pd.DataFrame) -> pd.DataFrame:
    """Each fix, with the time since the bug was opened (or last reopened).

    Returns:
        ``bug_id, opened_at, fixed_at, hours``, one row per move to ``fixed``.
    """
    events = bugs.sort_values(["bug_id", "updated_at"], kind="stable")
    opened = events["updated_at"].where(events["event"].isin(["open", "reopen"]))
    events = events.assign(opened_at=opened.groupby(events["bug_id"]).ffill())
    fixes = events[(events["event"] == "transition") & (events["status"] == "fixed")]
    table = pd.DataFrame({"bug_id": fixes["bug_id"], "opened_at": fixes["opened_at"],
                          "fixed_at": fixes["updated_at"]})
    table["hours"] = (table["fixed_at"] - table["opened_at"]).dt.total_seconds() / 3600
    return table.reset_index(drop=True)


def bug_summary(bugs: pd.DataFrame) -> pd.DataFrame:
    """Totals: bugs opened, fixes, reopens, bugs open now (last status not fixed), mean hours to fix.

    Returns:
        One row: ``bugs, opened, fixed, reopened, open_now, mean_hours_to_fix``.
    """
    activity = bug_activity(bugs).sum(numeric_only=True)
    last = bugs.sort_values("updated_at", kind="stable").drop_duplicates("bug_id", keep="last")
    fixes = time_to_fix(bugs)
    return pd.DataFrame([{
        "bugs": int(bugs["bug_id"].nunique()),
        "opened": int(activity.get("opened", 0)), "fixed": int(activity.get("fixed", 0)),
        "reopened": int(activity.get("reopened", 0)),
        "open_now": int((last["status"] != "fixed").sum()),
        "mean_hours_to_fix": float(fixes["hours"].mean()) if len(fixes) else np.nan,
    }])
