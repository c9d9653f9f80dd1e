from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hpcgym.workloads.header import SwfHeader
from hpcgym.workloads.swf import COL, N_FIELDS, STATUSES, SwfTrace, read_swf, write_swf

value = st.one_of(
    st.just(-1.0),
    st.integers(0, 10**9).map(float),
    st.floats(0, 1e7, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(value, min_size=N_FIELDS, max_size=N_FIELDS), max_size=30),
    st.lists(st.sampled_from(STATUSES), min_size=30, max_size=30),
)
def test_any_valid_records_survive_write_and_read(tmp_path_factory, rows, statuses):
    data = np.array(rows, dtype=np.float64).reshape(-1, N_FIELDS)
    data[:, COL["status"]] = statuses[: len(data)]
    # Valid records (issue 39, L1/L2): whole job ids, and no job its own preceding job.
    ids = np.floor(data[:, COL["job_id"]])
    data[:, COL["job_id"]] = ids
    own = (data[:, COL["preceding_job"]] == ids) & (ids != -1)
    data[own, COL["preceding_job"]] = -1.0
    trace = SwfTrace(SwfHeader((" Version: 2.2", " Note: property test")), data)
    path = write_swf(trace, tmp_path_factory.mktemp("rt") / "t.swf")
    again = read_swf(path, drop_status=())
    assert np.array_equal(again.data, data)
    assert again.header.lines == trace.header.lines
