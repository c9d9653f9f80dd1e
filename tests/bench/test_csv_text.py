"""jobs.csv is the same text with and without pyarrow (issue 42: it changed between two runs)."""

from __future__ import annotations

import io
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa  # the reference the plain writer must equal (in the test extras)
import pyarrow.csv as pa_csv
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.bench.csv_text import csv_lines, float_text

ROOT = Path(__file__).resolve().parents[2]


def _arrow_text(table: pd.DataFrame) -> str:
    buf = io.BytesIO()
    options = pa_csv.WriteOptions(quoting_style="needed")
    pa_csv.write_csv(pa.Table.from_pandas(table, preserve_index=False), buf, options)
    return buf.getvalue().decode("utf-8")


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1e9, 9999999999.0, 1e10, 12345678901.0, 1e-6, 1.5e-6]
EDGES += [1e-7, 1.234e-7, 0.000123, 2.0**53, 1e15, 1e16, 1e21, 1e22, 5e-324, 1.7976931348623157e308]
EDGES += [math.inf, -math.inf, math.nan, 0.1, 1 / 3, 123456.0, 407.96, 1.2805930397727274]


def test_edge_floats_are_written_as_pyarrow_writes_them():
    table = pd.DataFrame({"x": EDGES})
    assert "".join(csv_lines(table)) == _arrow_text(table)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=20))
def test_any_float_is_written_as_pyarrow_writes_it(values):
    table = pd.DataFrame({"x": np.array(values, dtype=np.float64)})
    assert "".join(csv_lines(table)) == _arrow_text(table)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.text(max_size=8)),
            st.booleans(),
            st.integers(min_value=-(2**62), max_value=2**62),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_strings_booleans_and_integers_are_written_as_pyarrow_writes_them(rows):
    table = pd.DataFrame(
        {
            "name": pd.array([r[0] for r in rows], dtype="str"),
            "flag": [r[1] for r in rows],
            "count": pd.array([r[2] for r in rows], dtype="int64"),
        }
    )
    assert "".join(csv_lines(table)) == _arrow_text(table)


def test_float_text_examples():
    assert float_text(1e-5) == "0.00001"
    assert float_text(1.234e-7) == "1.234e-7"
    assert float_text(1e15) == "1e+15"
    assert float_text(51302.96) == "51302.96"
    assert float_text(-0.0) == "-0"


def test_a_bench_job_table_is_the_same_file_with_and_without_pyarrow(tmp_path):
    code = (
        "import sys\n"
        "if sys.argv[1] == 'without': sys.modules['pyarrow'] = None\n"
        "sys.path.insert(0, 'benchmarks')\n"
        "from pathlib import Path\n"
        "from jobs_csv import table\n"
        "from hpcgym.bench.report import _write_csv\n"
        "_write_csv(table(3000), Path(sys.argv[2]))\n"
    )
    files = {}
    for mode in ("with", "without"):
        files[mode] = tmp_path / f"jobs-{mode}.csv"
        subprocess.run([sys.executable, "-c", code, mode, str(files[mode])], check=True, cwd=ROOT)
    assert files["with"].read_bytes() == files["without"].read_bytes()
    assert len(files["with"].read_text().splitlines()) == 3001
