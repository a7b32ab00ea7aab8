"""The Vega expressions the browser evaluates: the filters, the outcomes counted, the period, Wilson intervals."""

from __future__ import annotations

from sprintflow.reporting.explore.cubes import ALL

__all__ = [
    "Z",
]

Z = 1.959963984540054


def _where(*dimensions: str, name: str | None = None) -> str:
    """The filter expression for a cube with a ``day`` and these dimensions.

    ``name`` (``strategy`` or ``criterion``) also keeps only rows whose ``name`` is the one picked in that filter.
    """
    parts = ["datum.day >= f_from && datum.day <= f_to"]
    parts += [f"(f_{dimension} == '{ALL}' || datum.{dimension} == f_{dimension})" for dimension in dimensions]
    if name is not None:
        parts.append(f"(f_{name} == '{ALL}' || datum.name == f_{name})")
    return " && ".join(parts)


# Which outcomes the headline and the trend count: whole evaluations, or the strategy
# or criterion picked in the filters (a criterion wins when both are picked).
_UNIT_OF_OUTCOME = (
    f"f_criterion != '{ALL}' ? (datum.level == 'criterion' && datum.name == f_criterion)"
    f" : f_strategy != '{ALL}' ? (datum.level == 'strategy' && datum.name == f_strategy)"
    " : datum.level == 'evaluation'")


_UNIT = ("(toDate(f_to) - toDate(f_from)) / 864e5 <= 45 ? 'day' : "
         "(toDate(f_to) - toDate(f_from)) / 864e5 <= 800 ? 'week' : 'month'")


def _wilson(k: str, n: str, prefix: str = "") -> dict[str, str]:
    """Vega expressions for the rate ``k / n`` and its Wilson interval (null without trials)."""
    p, z2 = f"(datum.{k} / datum.{n})", Z * Z
    center = f"({p} + {z2} / (2 * datum.{n})) / (1 + {z2} / datum.{n})"
    half = f"{Z} * sqrt({p} * (1 - {p}) / datum.{n} + {z2} / (4 * datum.{n} * datum.{n})) / (1 + {z2} / datum.{n})"
    return {f"{prefix}rate": f"datum.{n} > 0 ? {p} : null",
            f"{prefix}low": f"datum.{n} > 0 ? {center} - {half} : null",
            f"{prefix}high": f"datum.{n} > 0 ? {center} + {half} : null",
            f"{prefix}label": (f"datum.{n} > 0 ? format({p}, '.1%') + ' [' + format({center} - {half}, '.1%') + "
                               f"'–' + format({center} + {half}, '.1%') + ']' : 'n/a'")}


def _period_of(day: str) -> str:
    """The start of the period holding ``day`` (a ``YYYY-MM-DD`` expression), as a UTC timestamp."""
    return (f"period_unit == 'day' ? toDate({day}) : period_unit == 'week' ? "
            f"toDate({day}) - ((utcday(toDate({day})) + 6) % 7) * 864e5 : "
            f"utc(utcyear(toDate({day})), utcmonth(toDate({day})), 1)")
