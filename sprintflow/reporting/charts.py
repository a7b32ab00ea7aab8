"""Charts of the reporting tables: matplotlib figures, and inline SVG for the offline HTML report.

Each function takes the table a :mod:`sprintflow.reporting.analytics` function
returned and gives a :class:`matplotlib.figure.Figure` (None when the table
is empty). Figures are built without pyplot, so nothing global changes and
any backend (Agg here, inline in a notebook) can draw them.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

import matplotlib
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType  # the rcParams names, for the type checker only

__all__ = [
    "bug_activity_chart",
    "cost_chart",
    "cost_trend_chart",
    "coverage_chart",
    "criterion_trend_chart",
    "mark_synthetic",
    "engine_chart",
    "flaky_tests_chart",
    "flakiness_chart",
    "iterations_to_green_chart",
    "pass_rate_trend",
    "regressions_chart",
    "score_trend_chart",
    "strategy_pass_rates",
    "strategy_trends",
    "testrun_chart",
    "to_svg",
]

# Text stays text (small, selectable) and ids are stable, so two reports of the same data are equal.
_STYLE: dict[RcKeyType, Any] = {
    "svg.fonttype": "none", "svg.hashsalt": "sprintflow", "font.size": 9,
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3}


def to_svg(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (no XML prolog, no date).
    """
    buffer = io.StringIO()
    with matplotlib.rc_context(_STYLE):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


_SYNTHETIC: dict[str, str | None] = {"note": None}


def mark_synthetic(note: str | None) -> None:
    """Label every chart drawn from now on as synthetic demo data (``note``: the history's
    :attr:`~sprintflow.history.sources.History.synthetic`; None draws them unlabelled).

    Example:
        >>> mark_synthetic("demo"); _SYNTHETIC["note"]
        'demo'
        >>> mark_synthetic(None)
    """
    _SYNTHETIC["note"] = note


def _figure(title: str, size: tuple[float, float] = (7.5, 3.2), labels=(), dates: bool = False
            ) -> tuple[Figure, Axes]:
    """A figure with one axes and margins fixed in inches (a layout engine would double the cost).

    Args:
        labels: the y tick labels, to leave room for the longest.
        dates: the x axis holds dates, drawn slanted.
    """
    width, height = size
    left = 0.5 + 0.07 * max((len(str(label)) for label in labels), default=0)
    bottom = 0.75 if dates else 0.45
    with matplotlib.rc_context(_STYLE):
        fig = Figure(figsize=size)
        fig.subplots_adjust(left=left / width, right=1 - 0.2 / width, top=1 - 0.35 / height,
                            bottom=bottom / height)
        axes = fig.add_subplot()
    axes.set_title(title, loc="left", fontsize=10)
    if _SYNTHETIC["note"]:
        fig.text(0.99, 0.99, "SYNTHETIC DEMO DATA", ha="right", va="top", fontsize=8, color="#b3261e",
                 fontweight="bold")
    if dates:
        axes.tick_params(axis="x", labelrotation=30)
    return fig, axes


def _date_axis(axes, dates: pd.Series) -> None:
    """Ticks and limits that fit the data: a week of data shows days, never a span of years.

    matplotlib pads a single date by years on each side; pad by half a day (or 4% of the span) instead.
    """
    locator = AutoDateLocator(minticks=3, maxticks=9)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    first, last = pd.Timestamp(dates.min()), pd.Timestamp(dates.max())
    pad = max((last - first) * 0.04, pd.Timedelta(hours=12))
    axes.set_xlim(first - pad, last + pad)


def _interval(axes, x: pd.Series, rate: pd.Series, low: pd.Series, high: pd.Series, **style) -> None:
    """A 95 % band, and error bars at each point so one point or a tiny sample still shows its interval."""
    axes.fill_between(x, low, high, alpha=0.2, label="95% interval", **style)
    axes.errorbar(x, rate, yerr=[(rate - low).clip(lower=0), (high - rate).clip(lower=0)], fmt="none",
                  elinewidth=1, capsize=2, alpha=0.6, **style)


def _percent_axis(axes, *, axis: str = "y") -> None:
    target = axes.yaxis if axis == "y" else axes.xaxis
    target.set_major_formatter(PercentFormatter(1.0))
    (axes.set_ylim if axis == "y" else axes.set_xlim)(0, 1.02)


def pass_rate_trend(by_week: pd.DataFrame, yield_by_week: pd.DataFrame | None = None) -> Figure | None:
    """Evaluation pass rate per week with its 95 % interval, and the first-pass yield beside it.

    Args:
        by_week: ``pass_rate_by_week(evals, by_strategy=False)``.
        yield_by_week: ``first_pass_yield(evals, freq="W")``.
    """
    if by_week.empty:
        return None
    fig, axes = _figure("Is the agent getting better? Evaluation pass rate per period", dates=True)
    _interval(axes, by_week["week"], by_week["pass_rate"], by_week["ci_low"], by_week["ci_high"], color="tab:blue")
    axes.plot(by_week["week"], by_week["pass_rate"], marker="o", markersize=3, label="evaluations passing")
    if yield_by_week is not None and not yield_by_week.empty:
        axes.plot(yield_by_week["week"], yield_by_week["yield"], marker="s", markersize=3,
                  linestyle="--", label="first-pass yield")
    _percent_axis(axes)
    _date_axis(axes, by_week["week"])
    axes.legend(loc="lower right", fontsize=8)
    return fig


def strategy_trends(by_week: pd.DataFrame) -> Figure | None:
    """One line per strategy: weekly pass rate (``pass_rate_by_week(evals)``).
    """
    if by_week.empty:
        return None
    fig, axes = _figure("Pass rate per strategy and period", dates=True)
    for strategy, rows in by_week.groupby("strategy", sort=True):
        axes.plot(rows["week"], rows["pass_rate"], marker="o", markersize=2, label=str(strategy))
    _percent_axis(axes)
    _date_axis(axes, by_week["week"])
    axes.legend(loc="lower right", fontsize=7, ncols=3)
    return fig


def strategy_pass_rates(by_strategy: pd.DataFrame) -> Figure | None:
    """Horizontal bars: each strategy's pass rate with its interval (``pass_rate_by_strategy``).
    """
    if by_strategy.empty:
        return None
    fig, axes = _figure("Pass rate by strategy (95% interval)", (7.5, 0.9 + 0.3 * len(by_strategy)),
                        labels=by_strategy["strategy"])
    rate = by_strategy["pass_rate"]
    errors = [(rate - by_strategy["ci_low"]).clip(lower=0), (by_strategy["ci_high"] - rate).clip(lower=0)]
    axes.barh(by_strategy["strategy"].astype(str), rate, xerr=errors, capsize=3)
    _percent_axis(axes, axis="x")
    return fig


def iterations_to_green_chart(to_green: pd.DataFrame) -> Figure | None:
    """How many iterations contracts needed to pass, and how many never did (``time_to_green``).
    """
    if to_green.empty:
        return None
    counts = to_green["iterations_to_green"].dropna().astype(int).value_counts().sort_index()
    labels = [str(i) for i in counts.index] + ["never"]
    values = list(counts.to_numpy()) + [int((~to_green["green"]).sum())]
    fig, axes = _figure("Iterations to green per contract", (7.5, 2.8), labels=["contracts"])
    bars = axes.bar(labels, values)
    bars[-1].set_color("tab:red")
    axes.set_xlabel("iterations")
    axes.set_ylabel("contracts")
    return fig


def coverage_chart(summary: pd.DataFrame) -> Figure | None:
    """Shares of criteria by verification and outcome (``coverage_summary``).
    """
    if summary.empty or summary["criteria"].sum() == 0:
        return None
    fig, axes = _figure("Criteria coverage", (7.5, 2.4), labels=summary["measure"])
    axes.barh(summary["measure"].astype(str), summary["share"].fillna(0))
    axes.invert_yaxis()
    _percent_axis(axes, axis="x")
    return fig


def flakiness_chart(flaky: pd.DataFrame) -> Figure | None:
    """Flip rate per strategy on unchanged content (``flaky_strategies``).
    """
    if flaky.empty:
        return None
    fig, axes = _figure("Flip rate on the same workspace hash", (7.5, 0.9 + 0.3 * len(flaky)),
                        labels=flaky["strategy"])
    axes.barh(flaky["strategy"].astype(str), flaky["flip_rate"].fillna(0), color="tab:orange")
    axes.invert_yaxis()
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    return fig


def regressions_chart(regressions: pd.DataFrame) -> Figure | None:
    """Regressions reported per week (``regressions_over_time``).
    """
    if regressions.empty:
        return None
    fig, axes = _figure("Regressions per week", (7.5, 2.6), dates=True)
    axes.bar(regressions["week"], regressions["regressions"], width=5, color="tab:red")
    _date_axis(axes, regressions["week"])
    return fig


def bug_activity_chart(activity: pd.DataFrame) -> Figure | None:
    """Bugs opened, fixed and reopened per week (``bug_activity``).
    """
    if activity.empty:
        return None
    fig, axes = _figure("Bugs per week", (7.5, 2.6), dates=True)
    for column, style in (("opened", "-"), ("fixed", "--"), ("reopened", ":")):
        axes.plot(activity["week"], activity[column], linestyle=style, marker="o", markersize=2, label=column)
    _date_axis(axes, activity["week"])
    axes.legend(fontsize=8)
    return fig


def score_trend_chart(trends: pd.DataFrame) -> Figure | None:
    """Scorer score per skill over time, one line per prompt version (``score_trends``).
    """
    if trends.empty:
        return None
    fig, axes = _figure("Scorer score per skill and prompt version", dates=True)
    for (skill, version), rows in trends.groupby(["skill", "prompt_version"], sort=True):
        axes.plot(rows["week"], rows["score"], marker="o", markersize=3, label=f"{skill} @ {version}")
    _percent_axis(axes)
    _date_axis(axes, trends["week"])
    axes.legend(fontsize=7, loc="lower right")
    return fig


def cost_chart(costs: pd.DataFrame) -> Figure | None:
    """Distribution of cost per sprint (``cost_per_sprint``); None when no engine reported cost.
    """
    known = costs["cost_usd"].dropna()
    if known.empty:
        return None
    fig, axes = _figure("Cost per sprint (USD)", (7.5, 2.6), labels=["contracts"])
    axes.hist(known, bins=30)
    axes.set_ylabel("contracts")
    return fig


def testrun_chart(trends: pd.DataFrame) -> Figure | None:
    """Failure rate and acceptance coverage of test runs per week (``testrun_trends``).
    """
    if trends.empty:
        return None
    fig, axes = _figure("Test runs: failure rate and acceptance coverage", (7.5, 2.6), dates=True)
    axes.plot(trends["week"], trends["failure_rate"], marker="o", markersize=3, label="failed tests")
    axes.plot(trends["week"], trends["acceptance_coverage"], linestyle="--", label="acceptance coverage")
    _percent_axis(axes)
    _date_axis(axes, trends["week"])
    axes.legend(fontsize=8)
    return fig


def criterion_trend_chart(trend: pd.DataFrame) -> Figure | None:
    """One line per criterion id: its pass rate per period (``criterion_pass_rate``).
    """
    if trend.empty:
        return None
    fig, axes = _figure("Pass rate per criterion", dates=True)
    for criterion, rows in trend.groupby("criterion", sort=True, observed=True):
        axes.plot(rows["period"], rows["pass_rate"], marker="o", markersize=2, label=str(criterion))
    _percent_axis(axes)
    _date_axis(axes, trend["period"])
    axes.legend(loc="lower right", fontsize=7, ncols=4)
    return fig


def cost_trend_chart(costs: pd.DataFrame) -> Figure | None:
    """Cost per sprint and per passed criterion, per period (``cost_over_time``); None without costs.
    """
    if costs.empty or costs["cost_usd"].notna().sum() == 0:
        return None
    fig, axes = _figure("Cost per sprint and per passed criterion (USD)", dates=True)
    axes.plot(costs["period"], costs["cost_per_sprint"], marker="o", markersize=3, label="per sprint")
    axes.plot(costs["period"], costs["cost_per_passed_criterion"], marker="s", markersize=3, linestyle="--",
              label="per passed criterion")
    _date_axis(axes, costs["period"])
    axes.set_ylim(bottom=0)
    axes.legend(fontsize=8)
    return fig


def engine_chart(engines: pd.DataFrame) -> Figure | None:
    """Engine A vs engine B: evaluation pass rate and sprints green, with intervals (``engine_comparison``).
    """
    if engines.empty:
        return None
    fig, axes = _figure("Engines: evaluations passing and sprints going green (95% intervals)",
                        (7.5, 1.1 + 0.45 * len(engines)), labels=engines["engine"])
    positions = range(len(engines))
    for offset, (rate, low, high, label) in enumerate((("pass_rate", "ci_low", "ci_high", "evaluations passing"),
                                                       ("green_rate", "green_ci_low", "green_ci_high",
                                                        "sprints green"))):
        y = [p + 0.2 * (1 - 2 * offset) for p in positions]
        errors = [(engines[rate] - engines[low]).clip(lower=0), (engines[high] - engines[rate]).clip(lower=0)]
        axes.barh(y, engines[rate], height=0.38, xerr=errors, capsize=3, label=label)
    axes.set_yticks(list(positions), engines["engine"].astype(str))
    _percent_axis(axes, axis="x")
    axes.legend(fontsize=8, loc="lower right")
    return fig


def flaky_tests_chart(flaky: pd.DataFrame, top: int = 15) -> Figure | None:
    """The flakiest tests' flip rates with their intervals (``flaky_tests``).
    """
    shown = flaky.head(top)
    if shown.empty:
        return None
    names = shown["test"].astype(str).str.slice(-48)
    fig, axes = _figure("Flaky tests: flip rate on the same workspace hash (95% interval)",
                        (7.5, 0.9 + 0.3 * len(shown)), labels=names)
    rate = shown["flip_rate"].astype(float)
    errors = [(rate - shown["ci_low"]).clip(lower=0), (shown["ci_high"] - rate).clip(lower=0)]
    axes.barh(names, rate, xerr=errors, capsize=3, color="tab:orange")
    axes.invert_yaxis()
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    return fig
