"""The notebook charts on a short history: days on the axis, intervals that stay visible."""

import matplotlib.dates as mdates
from synthetic_history import synthetic_evals

from sprintflow.reporting import analytics as r
from sprintflow.reporting import charts


def test_a_week_of_data_is_drawn_per_day_on_a_week_long_axis():
    evals = synthetic_evals(60, weeks=1)
    period = r.auto_freq(evals.timestamp)
    by_day = r.pass_rate_by_week(evals, by_strategy=False, freq=period)
    figure = charts.pass_rate_trend(by_day, r.first_pass_yield(evals, freq=period))
    axes = figure.axes[0]
    low, high = axes.get_xlim()
    assert period == "D" and len(by_day) == 7
    assert 6 <= high - low <= 9  # days, not the years matplotlib pads a lone point with
    ticks = [mdates.num2date(t) for t in axes.get_xticks() if low <= t <= high]
    assert len({t.year for t in ticks}) == 1 and len(ticks) >= 3
    assert axes.collections and any(c.get_label() == "95% interval" for c in axes.collections)
    bars = [c for c in axes.collections if type(c).__name__ == "LineCollection"]
    assert bars and len(bars[0].get_segments()) == 7  # an error bar on every day


def test_one_point_keeps_its_interval_and_a_sane_axis():
    evals = synthetic_evals(8, weeks=1)
    evals = evals[evals.timestamp.dt.normalize() == evals.timestamp.dt.normalize().min()]
    by_day = r.pass_rate_by_week(evals, by_strategy=False, freq="D")
    axes = charts.pass_rate_trend(by_day).axes[0]
    low, high = axes.get_xlim()
    assert len(by_day) == 1 and 0.5 < high - low < 2
    [bars] = [c for c in axes.collections if type(c).__name__ == "LineCollection"]
    (_, bottom), (_, top) = bars.get_segments()[0]
    assert top - bottom > 0.2  # a handful of evaluations: a wide interval, drawn
