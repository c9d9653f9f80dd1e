"""Slurm sacct dumps in: every state, steps, arrays, time limits, sizes, time zones, bad lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcgym.cli import main
from hpcgym.errors import WorkloadError
from hpcgym.workloads import read_workload, registry
from hpcgym.workloads import slurm_values as sv
from hpcgym.workloads.convert import trace_to_workload
from hpcgym.workloads.formats import file_format, read_trace
from hpcgym.workloads.slurm import SACCT_FORMAT, read_sacct
from hpcgym.workloads.swf import COL, read_swf

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "slurm-sample.sacct"
PUBLIC = DATA / "slurm-jobinfo-sacct.txt"
PUBLIC_FIELDS = (
    "JobID,JobName,User,Partition,NodeList,NNodes,ncpus,NTasks,State,Submit,start,end,timelimit,"
    "elapsed,TotalCPU,UserCPU,SystemCPU,ReqMem,MaxRSS,TRESUsageInTot,TRESUsageOutTot,"
    "MaxDiskWrite,MaxDiskRead,MaxRSSNode,MaxDiskWriteNode,MaxDiskReadNode,Comment"
)
HEAD = "JobID|JobIDRaw|User|Group|Partition|State|Submit|Start|End|Elapsed|Timelimit|NNodes|NCPUS"


def _dump(tmp_path: Path, *lines: str, head: str = HEAD, name: str = "d.sacct") -> Path:
    p = tmp_path / name
    p.write_text("\n".join((head, *lines)) + "\n")
    return p


def _by_id(trace_data: np.ndarray) -> dict[int, np.ndarray]:
    return {int(r[COL["job_id"]]): r for r in trace_data}


# --- single values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1-02:03:04", 93784.0),
        ("02:00:00", 7200.0),
        ("30", 1800.0),  # a bare number is minutes, as in sbatch --time
        ("5:30", 330.0),
        ("2-12", 216000.0),
        ("2-12:30", 217800.0),
        ("UNLIMITED", None),
        ("Partition_Limit", None),
        ("", None),
    ],
)
def test_time_limit_forms(text: str, seconds: float | None) -> None:
    assert sv.time_limit(text) == seconds


def test_time_limit_raw_is_minutes() -> None:
    assert sv.time_limit("90", raw_minutes=True) == 5400.0
    assert sv.time_limit("UNLIMITED", raw_minutes=True) is None


@pytest.mark.parametrize("bad", ["1:2:3:4", "1-", "x", "1.5", "-3", "1-2:3:4:5"])
def test_time_limit_refuses_other_forms(bad: str) -> None:
    with pytest.raises(ValueError, match="time limit"):
        sv.time_limit(bad)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("01:00:00", 3600.0), ("3-00:00:25", 259225.0), ("00:02.617", 2.617), ("42", 42.0)],
)
def test_durations(text: str, seconds: float) -> None:
    assert sv.duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("raw", "word"),
    [("CANCELLED by 1000", "CANCELLED"), ("CANCELLED+", "CANCELLED"), ("timeout", "TIMEOUT")],
)
def test_state_words(raw: str, word: str) -> None:
    assert sv.state_word(raw) == word


def test_unknown_state_is_refused() -> None:
    with pytest.raises(ValueError, match="not a Slurm job state"):
        sv.state_word("EXPLODED")


def test_times_are_read_in_the_zone_given_across_a_dst_change() -> None:
    ams = sv.zone("Europe/Amsterdam")
    # Clocks went from 02:00 to 03:00 on 2024-03-31 in Amsterdam: 01:30 to 03:30 is one hour.
    start = sv.timestamp("2024-03-31T01:30:00", ams)
    end = sv.timestamp("2024-03-31T03:30:00", ams)
    assert start is not None and end is not None and end - start == 3600
    utc = sv.zone("UTC")
    assert sv.timestamp("2024-03-31T03:30:00", utc) == 1711855800
    assert sv.timestamp("2024-03-31T03:30:00+02:00", utc) == 1711848600  # an offset wins
    assert sv.timestamp("None", utc) is None and sv.timestamp("Unknown", utc) is None


def test_unknown_time_zone_is_a_clear_error() -> None:
    with pytest.raises(WorkloadError, match="unknown time zone 'Mars/Olympus'"):
        sv.zone("Mars/Olympus")


# --- the sample dump --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample() -> dict[int, np.ndarray]:
    return _by_id(read_sacct(SAMPLE).data)


def test_sample_has_one_record_per_job_and_counts_the_rest() -> None:
    trace = read_sacct(SAMPLE)
    report = trace.report
    assert report is not None
    # 15 job lines, 4 steps, 1 earlier record of a requeued job: 20 data lines, none lost.
    assert (report.data_lines, report.kept, len(report.skipped)) == (20, 15, 0)
    notes = " | ".join(report.notes)
    assert "4 step lines" in notes
    assert "1 jobs ended before they started (CANCELLED 1)" in notes
    assert "2 jobs had not ended when the dump was taken (PENDING 1, RUNNING 1)" in notes
    assert "earlier records of requeued jobs (REQUEUED 1)" in notes
    assert "Timelimit Partition_Limit" in notes and "Timelimit UNLIMITED" in notes
    assert [f" Note: {n}" for n in report.notes] == [
        line for line in trace.header.lines if line.startswith(" Note:")
    ]


def test_states_become_swf_statuses(sample: dict[int, np.ndarray]) -> None:
    status = {jid: int(r[COL["status"]]) for jid, r in sample.items()}
    assert status[100] == 1  # COMPLETED
    assert status[101] == 0  # TIMEOUT
    assert status[102] == 5 and status[103] == 5  # CANCELLED before and after start
    assert status[104] == 0 and status[105] == 0 and status[106] == 0  # FAILED, NODE_FAIL, OOM
    assert status[205] == -1 and status[200] == -1  # RUNNING, pending array


def test_jobs_that_never_ran_are_kept_with_no_run_time(sample: dict[int, np.ndarray]) -> None:
    for jid in (102, 200, 205):
        assert sample[jid][COL["run_time"]] == -1 and sample[jid][COL["wait_time"]] == -1
    assert sample[102][COL["req_procs"]] == 8  # what it asked for stays
    w = read_workload(SAMPLE)
    assert len(w) == 12 and dict(w.skipped) == {"missing run time (field 4)": 3}
    assert {102, 200, 205}.isdisjoint(j.id for j in w.jobs)


def test_cancelled_after_start_ran_until_cancelled(sample: dict[int, np.ndarray]) -> None:
    r = sample[103]
    assert (r[COL["wait_time"]], r[COL["run_time"]]) == (300, 1800)


def test_array_tasks_and_het_components_are_jobs_numbered_by_jobidraw(
    sample: dict[int, np.ndarray],
) -> None:
    assert {201, 202, 300, 301} <= set(sample)
    assert sample[201][COL["run_time"]] == 600 and sample[202][COL["run_time"]] == 900


def test_requeued_job_keeps_its_last_record(sample: dict[int, np.ndarray]) -> None:
    assert sample[204][COL["run_time"]] == 1800 and sample[204][COL["status"]] == 1


def test_time_limits_and_cpu_time(sample: dict[int, np.ndarray]) -> None:
    assert sample[100][COL["req_time"]] == 93784  # 1-02:03:04
    assert sample[103][COL["req_time"]] == -1  # UNLIMITED
    assert sample[104][COL["req_time"]] == -1  # Partition_Limit
    assert sample[100][COL["avg_cpu_time"]] == pytest.approx(56400 / 16)  # TotalCPU per CPU


def test_elapsed_is_the_run_time(sample: dict[int, np.ndarray]) -> None:
    # Job 203 spans the night clocks went forward in Amsterdam: Elapsed (1 h) is the truth,
    # End - Start read in UTC would be 2 h.
    assert sample[203][COL["run_time"]] == 3600
    assert sample[101][COL["run_time"]] == 7230  # TIMEOUT: ran past its limit by 30 s


def test_without_elapsed_run_time_is_end_minus_start_in_the_zone(tmp_path: Path) -> None:
    head = "JobID|State|Submit|Start|End|NCPUS"
    line = "7|COMPLETED|2024-03-31T01:00:00|2024-03-31T01:30:00|2024-03-31T03:30:00|4"
    p = _dump(tmp_path, line, head=head)
    utc = read_sacct(p).data[0]
    ams = read_sacct(p, timezone_name="Europe/Amsterdam").data[0]
    assert utc[COL["run_time"]] == 7200 and ams[COL["run_time"]] == 3600
    assert read_sacct(p, timezone_name="Europe/Amsterdam").header.time_zone_string == (
        "Europe/Amsterdam"
    )


def test_units_cpus_or_nodes(tmp_path: Path, sample: dict[int, np.ndarray]) -> None:
    assert sample[101][COL["alloc_procs"]] == 64
    nodes = _by_id(read_sacct(SAMPLE, unit="node").data)
    assert nodes[101][COL["alloc_procs"]] == 2 and nodes[105][COL["alloc_procs"]] == 2
    assert read_sacct(SAMPLE, unit="node").header.max_nodes is not None


def test_machine_defaults_to_peak_use_and_can_be_given() -> None:
    # 10:05-12:05:30 job 101 holds 64 CPUs; 11:00:15-13:00:15 job 105 holds 32; 11:30:01-11:40:01
    # job 106 holds 8: 104 at once, the most the sample's jobs ever held.
    assert read_sacct(SAMPLE).header.max_procs == 104
    trace = read_sacct(SAMPLE, machine=256)
    assert trace.header.max_procs == 256 and "given" in (trace.header.get("MaxProcs") or "")
    assert trace_to_workload(trace).platform.total_nodes == 256


def test_machine_smaller_than_a_job_is_refused_naming_the_line() -> None:
    trace = read_sacct(SAMPLE, machine=32)
    with pytest.raises(WorkloadError, match=r"slurm-sample.sacct:5: job 101 asks for 64"):
        trace_to_workload(trace)


def test_header_names_the_source_and_start_time() -> None:
    header = read_sacct(SAMPLE).header
    assert header.get("Installation") == "sacct dump slurm-sample.sacct"
    assert header.unix_start_time == 1711792800  # 2024-03-30T10:00:00 UTC, the first submit
    assert header.get_all("Partition") == ["1 batch", "2 gpu"]


def test_ids_without_jobidraw(tmp_path: Path) -> None:
    head = "JobID|State|Submit|Start|End|NCPUS"
    plain = _dump(
        tmp_path,
        "7|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1",
        "9|COMPLETED|2024-01-01T00:00:05|2024-01-01T00:00:05|2024-01-01T00:01:00|1",
        head=head,
    )
    assert list(read_sacct(plain).data[:, 0]) == [7, 9]
    arrays = _dump(
        tmp_path,
        "7_1|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1",
        "7_2|COMPLETED|2024-01-01T00:00:05|2024-01-01T00:00:05|2024-01-01T00:01:00|1",
        head=head,
        name="a.sacct",
    )
    trace = read_sacct(arrays)
    assert list(trace.data[:, 0]) == [1, 2]
    assert any("file order" in n for n in trace.report.notes)  # type: ignore[union-attr]


def test_users_and_groups_numbered_or_taken_from_uid(tmp_path: Path) -> None:
    data = _by_id(read_sacct(SAMPLE).data)
    assert data[100][COL["user_id"]] == 1 and data[101][COL["user_id"]] == 2
    head = "JobID|UID|GID|State|Submit|Start|End|NCPUS"
    p = _dump(
        tmp_path,
        "7|1234|99|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1",
        head=head,
    )
    row = read_sacct(p).data[0]
    assert (row[COL["user_id"]], row[COL["group_id"]]) == (1234, 99)


# --- the public dump ----------------------------------------------------------------------------


def test_public_dump_reads_with_its_columns_and_delimiter() -> None:
    trace = read_sacct(PUBLIC, fields=PUBLIC_FIELDS.split(","), delimiter="☃")
    report = trace.report
    assert report is not None
    # 84 lines: 37 jobs and 48 steps (one line of the file's 84 is the last, unterminated).
    assert report.data_lines == report.kept + 48 and len(report.skipped) == 0
    assert report.kept == 37
    w = trace_to_workload(trace)
    assert len(w) + 17 == report.kept  # 17 jobs still PENDING or RUNNING in the dump
    assert "RUNNING 14" in " ".join(report.notes)
    # The array task 20963999_982 is a job; with no JobIDRaw, jobs are numbered in file order.
    assert any("file order" in n for n in report.notes)


def test_public_dump_without_its_columns_says_how_to_read_it() -> None:
    with pytest.raises(WorkloadError, match=r"slurm-jobinfo-sacct.txt:1: the first line is not"):
        read_sacct(PUBLIC, delimiter="☃")


# --- bad input --------------------------------------------------------------------------------

GOOD = (
    "7|7|u|g|p|COMPLETED|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|00:01:00|1|1|4"
)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (GOOD.replace("COMPLETED", "EXPLODED"), "column State: state 'EXPLODED' is not"),
        (GOOD.replace("|1|1|4", "|1-2-3|1|4"), "column Timelimit: cannot read time limit"),
        (GOOD.replace("2024-01-01T00:01:00|00:01", "yesterday|00:01"), "column End: cannot read"),
        (GOOD.replace("|1|4", "|1|four"), "column NCPUS: 'four' is not a whole number"),
        (GOOD + "|extra", "has 14 fields; the header names 13"),
        (GOOD.replace("|2024-01-01T00:00:00|2024", "|Unknown|2024", 1), "column Submit: the"),
        (
            GOOD.replace("T00:00:00|2024-01-01T00:01:00", "T00:05:00|2024-01-01T00:01:00"),
            "column End: the job ends before it starts",
        ),
    ],
)
def test_bad_lines_are_named_by_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    p = _dump(tmp_path, GOOD.replace("7|7", "6|6"), line)
    with pytest.raises(WorkloadError) as err:
        read_sacct(p)
    assert f"{p}:3: {message}" in str(err.value)
    assert "--lenient" in str(err.value)


def test_lenient_skips_bad_lines_and_lists_them(tmp_path: Path) -> None:
    p = _dump(tmp_path, GOOD.replace("7|7", "6|6"), GOOD.replace("COMPLETED", "x"), GOOD)
    trace = read_sacct(p, strict=False)
    assert list(trace.data[:, 0]) == [6, 7]
    assert trace.report is not None and [s.line for s in trace.report.skipped] == [3]
    assert trace.report.data_lines == 3


def test_missing_columns_are_named(tmp_path: Path) -> None:
    p = _dump(tmp_path, "7|COMPLETED", head="JobID|State")
    with pytest.raises(WorkloadError, match=r"no Submit, Start, NCPUS, End column") as err:
        read_sacct(p)
    assert SACCT_FORMAT in str(err.value)


def test_table_output_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "t.sacct"
    p.write_text("JobID    State\n------- -------\n7   COMPLETED\n")
    with pytest.raises(WorkloadError, match=r"t.sacct:2: this is sacct's table output"):
        read_sacct(p)


def test_parsable_with_trailing_delimiter_and_gzip(tmp_path: Path) -> None:
    import gzip

    text = "\n".join(line + "|" for line in SAMPLE.read_text().splitlines()) + "\n"
    p = tmp_path / "trailing.sacct.gz"
    p.write_bytes(gzip.compress(text.encode()))
    assert np.array_equal(read_sacct(p).data, read_sacct(SAMPLE).data)


# --- where a workload is accepted ----------------------------------------------------------------


def test_format_is_detected_by_name_or_header(tmp_path: Path) -> None:
    assert file_format(SAMPLE) == "sacct"
    other = tmp_path / "jobs.txt"
    other.write_bytes(SAMPLE.read_bytes())
    assert file_format(other) == "sacct"
    assert np.array_equal(read_trace(other).data, read_sacct(SAMPLE).data)
    assert file_format(PUBLIC) == "swf"  # no header: needs its columns, so not guessed
    assert registry.is_trace_path("some/where.sacct")


def test_a_dump_loads_as_a_workload_set(tmp_path: Path) -> None:
    w = registry.load(str(SAMPLE))
    assert len(w) == 12 and w.platform.total_nodes == 104


def test_cli_import_then_simulate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["workloads", "import", "slurm", str(SAMPLE), "jobs.swf"]) == 0
    out = capsys.readouterr().out
    assert "wrote jobs.swf" in out and "1 jobs ended before they started" in out
    swf = read_swf("jobs.swf")
    assert len(swf) == 15 and swf.header.max_procs == 104
    assert "hpcgym workloads import slurm" in (swf.header.get("hpcgym-command") or "")
    assert main(["simulate", "--scheduler", "easy", "--workload", "jobs.swf"]) == 0
    out = capsys.readouterr().out
    assert "12 jobs" in out and "completed" in out
    # Again: the existing file is replaced, and says so.
    assert main(["workloads", "import", "slurm", str(SAMPLE), "jobs.swf"]) == 0
    assert "replaced jobs.swf" in capsys.readouterr().out


def test_cli_import_public_dump_with_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "public.swf"
    argv = ["workloads", "import", "slurm", str(PUBLIC), str(out), "--fields", PUBLIC_FIELDS]
    argv += ["--delimiter", "☃", "--unit", "node", "--machine", "200"]
    argv += ["--timezone", "Europe/Amsterdam"]
    assert main(argv) == 0
    header = read_swf(out).header
    assert header.max_procs == 200 and header.time_zone_string == "Europe/Amsterdam"
    assert main(["simulate", "--scheduler", "easy", "--workload", str(out)]) == 0


def test_cli_bad_row_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _dump(tmp_path, GOOD, GOOD.replace("|1|1|4", "|1-2-3|1|4"))
    assert main(["workloads", "import", "slurm", str(bad), str(tmp_path / "o.swf")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"hpcgym: error: {bad}:3: column Timelimit") and "\n" not in err
    assert not (tmp_path / "o.swf").exists()
    assert main(["simulate", "--scheduler", "easy", "--workload", str(bad)]) == 2
    assert f"{bad}:3:" in capsys.readouterr().err


def test_cli_refuses_to_write_over_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "d.sacct"
    p.write_bytes(SAMPLE.read_bytes())
    assert main(["workloads", "import", "slurm", str(p), str(p)]) == 2
    assert "is the file being read" in capsys.readouterr().err
    assert p.read_bytes() == SAMPLE.read_bytes()


def test_an_env_plays_a_sacct_dump() -> None:
    import gymnasium as gym

    import hpcgym  # noqa: F401  (registers the envs)

    env = gym.make("hpcgym/Rigid-v0", workload=str(SAMPLE), n_jobs=8)
    env.reset(seed=0)
    episode = env.unwrapped._episode  # type: ignore[attr-defined]
    assert episode.platform.total_nodes == 104 and len(episode.jobs) == 8
    env.close()


def test_sizes_beyond_what_hpcgym_simulates_are_refused(tmp_path: Path) -> None:
    huge = GOOD.replace("|1|1|4", "|1|1|1000000000000")
    with pytest.raises(WorkloadError, match=r"d.sacct:2: column NCPUS: 1000000000000 is more"):
        read_sacct(_dump(tmp_path, huge))
    with pytest.raises(WorkloadError, match="from 1 to 16,777,216"):
        read_sacct(SAMPLE, machine=2**25)
    many = [GOOD.replace("7|7", f"{k}|{k}").replace("|1|1|4", "|1|1|9000000") for k in (1, 2)]
    with pytest.raises(WorkloadError, match="held 18,000,000 CPUs at once"):
        read_sacct(_dump(tmp_path, *many, name="many.sacct"))


def test_columns_given_without_a_required_one_are_named(tmp_path: Path) -> None:
    p = tmp_path / "noheader.sacct"
    p.write_text("7|COMPLETED\n")
    with pytest.raises(WorkloadError, match=r"the columns given \(--fields\): the dump has no"):
        read_sacct(p, fields=["JobID", "State"])


def test_a_job_with_no_cpu_allocated_never_ran(tmp_path: Path) -> None:
    # Older Slurm prints a Start (= End) for a job cancelled while it waited; NCPUS is 0.
    line = GOOD.replace("COMPLETED", "CANCELLED by 5").replace("|1|1|4", "|1|1|0")
    trace = read_sacct(_dump(tmp_path, line))
    row = trace.data[0]
    assert (row[COL["run_time"]], row[COL["wait_time"]], row[COL["status"]]) == (-1, -1, 5)
    assert "1 jobs ended before they started (CANCELLED 1)" in " ".join(trace.report.notes)  # type: ignore[union-attr]
