"""Exported files follow their formats' documented schemas, checked without hpcgym's readers.

Batsim: the workload schema of Batsim's documentation ("Workload": ``nb_res``, ``jobs`` with
``id``, ``subtime``, ``walltime``, ``res``, ``profile``, and ``profiles`` by type), as a JSON
Schema. SWF: the Standard Workload Format 2.2 as analysis tools such as evalys read it (18
whitespace-separated numeric columns, ``;`` comment lines, ``; Key: value`` header entries
matched by ``^;\\s(.*):\\s(.*)``). evalys itself is not a test dependency: its 4.0.7 SWF reader
calls ``pandas.read_csv(delim_whitespace=True)``, which pandas 3 no longer accepts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from hpcgym.cli import main
from hpcgym.workloads import load, read_workload, transforms, write_workload

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "slurm-sample.sacct"

NUMBER = {"type": "number", "minimum": 0}
WALLTIME = {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"const": -1}]}
BATSIM_WORKLOAD = {
    "type": "object",
    "required": ["nb_res", "jobs", "profiles"],
    "properties": {
        "nb_res": {"type": "integer", "minimum": 1},
        "jobs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "subtime", "res", "profile"],
                "properties": {
                    "id": {"type": ["integer", "string"]},
                    "subtime": NUMBER,
                    "walltime": {
                        "anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"const": -1}]
                    },
                    "res": {"type": "integer", "minimum": 1},
                    "profile": {"type": "string"},
                },
            },
        },
        "profiles": {
            "type": "object",
            "additionalProperties": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["type", "delay"],
                        "properties": {"type": {"const": "delay"}, "delay": NUMBER},
                    },
                    {
                        "type": "object",
                        "required": ["type", "cpu", "com"],
                        "properties": {
                            "type": {"const": "parallel_homogeneous"},
                            "cpu": NUMBER,
                            "com": NUMBER,
                        },
                    },
                ]
            },
        },
    },
}


def _check_batsim(path: Path) -> dict:
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, BATSIM_WORKLOAD)
    ids = [j["id"] for j in doc["jobs"]]
    assert len(set(ids)) == len(ids), "job ids are unique"
    assert all(j["profile"] in doc["profiles"] for j in doc["jobs"]), "every profile is defined"
    assert all(j["res"] <= doc["nb_res"] for j in doc["jobs"]), "every job fits the platform"
    subtimes = [j["subtime"] for j in doc["jobs"]]
    assert subtimes == sorted(subtimes)
    return doc


@pytest.mark.parametrize("profile", ["delay", "parallel_homogeneous"])
def test_batsim_output_follows_the_documented_schema(tmp_path: Path, profile: str) -> None:
    for name, w in (
        ("sample", read_workload(SAMPLE)),
        ("kth", transforms.first(load("swf/kth-sp2-v0"), 300)),
        ("hpc2n", transforms.first(load("swf/hpc2n-v0"), 300)),
    ):
        doc = _check_batsim(write_workload(w, tmp_path / f"{name}.json", profile=profile))
        assert len(doc["jobs"]) == len(w)


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    p = write_workload(read_workload(SAMPLE), tmp_path / "s.json")
    doc = json.loads(p.read_text())
    doc["jobs"][0]["res"] = 0
    p.write_text(json.dumps(doc))
    with pytest.raises(jsonschema.ValidationError):
        _check_batsim(p)


SWF_COLUMNS = [
    "jobID", "submission_time", "waiting_time", "execution_time", "proc_alloc", "cpu_used",
    "mem_used", "proc_req", "user_est", "mem_req", "status", "uid", "gid", "exe_num", "queue",
    "partition", "prev_jobs", "think_time",
]  # fmt: skip
"""The 18 SWF columns, named as evalys names them."""


def _check_swf(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path, sep=r"\s+", comment=";", header=None, names=SWF_COLUMNS)
    assert len(df.columns) == 18 and not df.isna().any().any(), "18 fields on every line"
    assert all(dtype.kind in "if" for dtype in df.dtypes), "every field is a number"
    assert (df["jobID"] >= 1).all() and df["jobID"].is_unique
    assert ((df.to_numpy() >= 0) | (df.to_numpy() == -1)).all(), "-1 is the only negative"
    assert set(df["status"]) <= {-1, 0, 1, 2, 3, 4, 5}
    metadata = {}
    for line in path.read_text().splitlines():
        if not line.startswith(";"):
            break
        m = re.search(r"^;\s(.*):\s(.*)", line)
        if m:
            metadata[m.group(1).strip()] = m.group(2).strip()
    for key in ("MaxProcs", "UnixStartTime"):
        found = re.search(r"\d+", metadata[key])
        assert found is not None and int(found.group()) >= 0, key
    return df


def test_swf_from_slurm_follows_the_documented_schema(tmp_path: Path) -> None:
    out = tmp_path / "jobs.swf"
    assert main(["workloads", "import", "slurm", str(SAMPLE), str(out)]) == 0
    df = _check_swf(out)
    assert len(df) == 15
    assert list(df["status"].value_counts().sort_index().items()) == [
        (-1, 2), (0, 4), (1, 7), (5, 2),
    ]  # fmt: skip


def test_swf_from_batsim_follows_the_documented_schema(tmp_path: Path) -> None:
    p = write_workload(read_workload(SAMPLE), tmp_path / "s.json")
    out = tmp_path / "back.swf"
    assert main(["workloads", "import", "batsim", str(p), str(out)]) == 0
    assert np.array_equal(
        _check_swf(out)["jobID"].to_numpy(), [j.id for j in read_workload(SAMPLE).jobs]
    )
