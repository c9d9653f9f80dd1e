"""One CSV text for a job table, whether or not pyarrow is installed.

pyarrow's CSV writer is several times faster than pandas' on the large job tables of a bench
run (``benchmarks/jobs_csv.py``), so it writes ``jobs.csv`` when it is installed. Its text is
the reference; without pyarrow, :func:`write_like_arrow` writes the same bytes in plain Python,
so two identical runs give identical files on any installation:

* the header and every string value in double quotes (a quote doubled), a missing value empty;
* booleans ``true``/``false``; integers as they are;
* floats in their shortest round-trip digits, fixed-point when the decimal exponent lies in
  ``[-6, 9]`` (``1e9`` is ``1000000000``, ``0.000001`` stays fixed), otherwise
  ``<digits>e<sign><exponent>`` (``1e+10``, ``1.234e-7``); a whole float has no ``.0``,
  ``-0.0`` is ``-0``, infinities ``inf``/``-inf``, NaN is empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

FIXED_EXPONENTS = range(-6, 10)
"""Decimal exponents written in fixed-point (pyarrow's shortest-float rule)."""


def float_text(x: float) -> str:
    """``x`` as pyarrow writes a float64 in CSV (see the module doc)."""
    if math.isnan(x):
        return ""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    _, digit_tuple, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exp = int(exp) + (len(digit_tuple) - len(digits))  # value = int(digits) * 10**exp
    e = exp + len(digits) - 1  # the decimal exponent of the first digit
    if e in FIXED_EXPONENTS:
        if exp >= 0:
            return sign + digits + "0" * exp
        point = len(digits) + exp
        if point > 0:
            return f"{sign}{digits[:point]}.{digits[point:]}"
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


def _quoted(value: Any) -> str:
    return '"' + str(value).replace('"', '""') + '"'


def _formatter(column: pd.Series) -> Callable[[Any], str]:
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return lambda v: "" if pd.isna(v) else ("true" if v else "false")
    if pd.api.types.is_integer_dtype(dtype):
        return lambda v: "" if pd.isna(v) else str(int(v))
    if pd.api.types.is_float_dtype(dtype):
        return lambda v: "" if pd.isna(v) else float_text(float(v))
    return lambda v: "" if v is None or (not isinstance(v, str) and pd.isna(v)) else _quoted(v)


def csv_lines(table: pd.DataFrame) -> Iterable[str]:
    """The lines (each ending in a newline) of ``table`` as pyarrow writes it, header first."""
    yield ",".join(_quoted(name) for name in table.columns) + "\n"
    formats = [_formatter(table[name]) for name in table.columns]
    columns = [table[name].tolist() for name in table.columns]
    for row in zip(*columns, strict=True):
        yield ",".join(f(v) for f, v in zip(formats, row, strict=True)) + "\n"


def write_like_arrow(table: pd.DataFrame, path: Path) -> None:
    """Write ``table`` to ``path`` with exactly pyarrow's CSV text (module doc)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.writelines(csv_lines(table))


__all__ = ["csv_lines", "float_text", "write_like_arrow"]
