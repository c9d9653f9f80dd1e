"""hpcgym bench: run policies on every episode of named scenarios and rank them.

Each run writes to a new folder, <out>/<scenarios>/<UTC time>-<configuration hash>, with
run.json (what produced it), results.csv, jobs.csv, leaderboard.md and plots/. Finished
(policy, episode) cells are stored as they finish, so an interrupted run continues with
--resume; a policy that fails is recorded in failures.csv and the others finish.

With no arguments it runs the main job: the default scenario with the baselines and a small
MaskablePPO agent trained in the same command.

Examples:
  hpcgym bench                                   # the main job
  hpcgym bench --list                            # the scenarios
  hpcgym bench --scenario rigid-lublin-v0        # its default policies
  hpcgym bench --scenario malleable-small-v2 --policy runs/x --with-defaults
  hpcgym bench --scenario rigid-lublin-v0 --resume          # finish the last such run
  hpcgym bench --from hpcgym-bench/rigid-lublin-v0/20260101-120000-1a2b3c4d/run.json
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpcgym.atomic import write_text
from hpcgym.bench import scenarios
from hpcgym.bench.cells import (
    FAILURES,
    DamagedCell,
    failure_path,
    load_cell,
    save_cell,
    save_failure,
    task_cell,
)
from hpcgym.bench.evaluate import kill_rule
from hpcgym.bench.gained import EXTENDS, accepted_hashes, added_agents, extension, history
from hpcgym.bench.judged import episodes_note
from hpcgym.bench.policy_names import pickled_agent, policy_kind
from hpcgym.bench.report import (
    best_heuristic_line,
    check_job_table,
    terminal,
    write_report,
)
from hpcgym.bench.runinfo import (
    RUN_JSON,
    check_agents_unchanged,
    config_hash,
    config_scenarios,
    latest_run_dir,
    new_run_dir,
    now_utc,
    read_record,
    run_config,
    run_record,
)
from hpcgym.bench.runlock import empty_folder, folder_lock
from hpcgym.bench.runner import (
    Outcome,
    Task,
    TaskFailure,
    TaskOutcome,
    execute,
    plan,
    resolve_executor,
)
from hpcgym.bench.verdicts import agent_lines, method_of
from hpcgym.envs.episodes import dropped_record
from hpcgym.errors import OutputError, SpecError

DEFAULT_OUT = "hpcgym-bench"


def _json(record: dict[str, Any]) -> str:
    import json

    return json.dumps(record, indent=2, sort_keys=False) + "\n"


RESUME_CHANGED = (
    "To benchmark the new weights, start a new run (without --resume); to finish this run, "
    "restore the weights it used."
)


def _newest_run(out: Path, label: str) -> Path | None:
    """The newest run folder under ``out/label``, whatever its configuration."""
    parent = out / label
    runs = (
        sorted((p for p in parent.iterdir() if (p / RUN_JSON).is_file()), key=lambda p: p.name)
        if parent.is_dir()
        else []
    )
    return runs[-1] if runs else None


def choose_folder(
    out: Path,
    label: str,
    config: dict[str, Any],
    run_dir: Path | None,
    resume: bool,
    overwrite: bool,
    held: contextlib.ExitStack,
) -> tuple[Path, dict[str, Any] | None]:
    """The run folder, locked until ``held`` closes, and when resuming its ``run.json`` record.

    Raises:
        SpecError: An explicit folder exists and neither ``resume`` nor ``overwrite`` is given;
            ``overwrite`` of a folder that is not a bench run; nothing to resume; a resumed
            folder made by another configuration, or with an agent whose weights changed; a
            folder another run holds (its lock), or took between the check and the lock.
    """
    chash = config_hash(config)
    if resume and overwrite:
        raise SpecError("give --resume or --overwrite, not both")
    if run_dir is None:
        if not resume:
            folder = new_run_dir(out, [label], chash)
            held.enter_context(folder_lock(folder))
            return folder, None
        found = latest_run_dir(out, [label], chash)
        newest = _newest_run(out, label) if found is None else None
        if newest is not None:  # the same run, but an agent changed, or a sweep grew, since?
            recorded = read_record(newest)["config"]
            check_agents_unchanged(
                recorded.get("agents"),
                config["agents"],
                f"nothing to resume: the newest run, {newest}",
                RESUME_CHANGED,
            )
            if added_agents(recorded, config) is not None:
                found = newest
        if found is None:
            raise SpecError(
                f"nothing to resume: no run of this configuration (hash {chash}) under "
                f"{out / label}; leave out --resume to start one"
            )
        run_dir = found
    busy = run_dir.exists() and bool(_contents(run_dir))
    if not busy:
        if resume:
            raise SpecError(
                f"nothing to resume in {run_dir}: it is empty or missing (no run was recorded "
                "there); leave out --resume to start the run there"
            )
        run_dir.mkdir(parents=True, exist_ok=True)
        held.enter_context(folder_lock(run_dir))
        if _contents(run_dir):  # another run came first, and has ended
            raise SpecError(
                f"{run_dir} was filled by another hpcgym bench meanwhile: give --resume to "
                "finish that run, or leave out --run-dir for a new folder"
            )
        for p in run_dir.iterdir():  # a killed run's temporaries
            p.unlink(missing_ok=True)
        return run_dir, None
    if resume:
        held.enter_context(folder_lock(run_dir))
        record = read_record(run_dir)
        check_agents_unchanged(
            record["config"].get("agents"), config["agents"], str(run_dir), RESUME_CHANGED
        )
        _check_recorded_hash(run_dir / RUN_JSON, record, run_dir)
        if record.get("config_hash") != chash and added_agents(record["config"], config) is None:
            raise SpecError(
                f"{run_dir} holds a run of another configuration (hash "
                f"{record.get('config_hash')}, this one {chash}); resume it with "
                f"hpcgym bench --from {run_dir / RUN_JSON} --run-dir {run_dir} --resume"
            )
        return run_dir, record
    if overwrite:
        if not (run_dir / RUN_JSON).is_file():
            raise SpecError(
                f"{run_dir} is not a bench run folder (no {RUN_JSON}): not overwriting it"
            )
        held.enter_context(folder_lock(run_dir))
        empty_folder(run_dir)  # the folder stays, and so does its lock
        return run_dir, None
    raise SpecError(
        f"{run_dir} already exists: give --resume to finish that run, --overwrite to replace "
        "it, or leave out --run-dir for a new folder"
    )


def _contents(folder: Path) -> list[Path]:
    """What ``folder`` holds, but for the temporaries of writes a killed run left behind.

    A run killed before its first write (run.json) leaves nothing else: its folder is free.
    """
    return [p for p in folder.iterdir() if not _temporary(p)]


def _temporary(path: Path) -> bool:
    """Whether ``path`` is a temporary of ``hpcgym.atomic`` (``.<name>.<random>.tmp``)."""
    return path.name.startswith(".") and path.name.endswith(".tmp") and path.is_file()


def _check_recorded_hash(path: Path, record: dict[str, Any], run_dir: Path) -> None:
    """Refuse a run.json whose ``config_hash`` is not the hash of the configuration it records.

    Such a file was edited by hand: resuming it would read the stored cells of its recorded
    configuration as this configuration's (two agents of one label would be mixed).

    Raises:
        SpecError: Naming the file, both hashes and what to do.
    """
    stated = record.get("config_hash")
    try:
        actual: str | None = config_hash(record["config"])
    except (KeyError, TypeError, AttributeError, ValueError):
        actual = None
    if actual == stated:
        return
    if actual is None:
        raise SpecError(
            f"{path}: its config is not a bench configuration any more (edited or damaged): "
            "it cannot be resumed; start a new run without --resume"
        )
    raise SpecError(
        f"{path}: its config_hash {stated!r} is not the hash of the configuration it records "
        f"({actual}): the file was edited. Set it back to {actual!r} and resume the recorded "
        f"configuration (hpcgym bench --from {path} --run-dir {run_dir} --resume), or start a "
        "new run without --resume"
    )


class _Progress:
    """One bar over the run's (policy, episode) cells, with an ETA, on stderr.

    A rich bar when rich is installed (it is in the ``rl`` extra), else a one-line
    ``[done/total] ... ETA`` counter; off when stderr is not a terminal or with
    ``--no-progress``.
    """

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled = total, 0, enabled and sys.stderr.isatty()
        self.t0 = time.perf_counter()
        self._rich: Any = None
        if self.enabled and total:
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeRemainingColumn,
                )
            except ImportError:
                return
            self._rich = Progress(
                TextColumn("episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[last]}"),
                console=Console(stderr=True),
            )
            self._rich.start()
            self._task = self._rich.add_task("episodes", total=total, last="")

    def step(self, what: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.update(self._task, advance=1, last=what)
            return
        spent = time.perf_counter() - self.t0
        eta = spent / self.done * (self.total - self.done)
        sys.stderr.write(f"\r[{self.done}/{self.total}] {what:<40.40} ETA {eta:5.0f} s ")
        sys.stderr.flush()

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self.enabled and self.done:
            sys.stderr.write("\n")


def run_bench(
    chosen: Sequence[scenarios.Scenario],
    policies: list[str] | None,
    *,
    out: Path = Path(DEFAULT_OUT),
    label: str | None = None,
    run_dir: Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    executor: str = "auto",
    workers: int = 2,
    ray_address: str | None = None,
    argv: Sequence[str] = (),
    progress: bool = True,
    job_table: str = "csv",
    trust_pickle: bool = False,
) -> int:
    """Run, store each cell, write the report, print the leaderboard and where everything is.

    Returns:
        0, or 1 when some cell failed (its error is in ``failures.csv``), or 130 when
        interrupted (the finished cells are kept; ``--resume`` continues).

    ``trust_pickle`` lets the agents saved as pickled SB3 zips run (``--trust-pickle``; they
    run code the file contains); without it such an agent is refused before anything runs.

    Raises:
        SpecError: ``job_table`` cannot be written (``report.check_job_table``; checked
            before any episode runs); a pickled agent without ``trust_pickle``; the run folder
            is refused (:func:`choose_folder`), among others because another ``hpcgym bench``
            holds it (one run per folder at a time).
    """
    check_job_table(job_table)
    chosen = [_one_kill_rule(sc, policies) for sc in chosen]
    names = [sc.name for sc in chosen]
    tasks = _trusting(plan(chosen, policies), trust_pickle)
    adapted = [
        (p, sc.name, sc.env_id, dict(sc.env_kwargs), sc.seeds)
        for sc in chosen
        for p in dict.fromkeys(policies or sc.policies)
        if policy_kind(p) == "adapted"
    ]
    if adapted:
        from hpcgym.bench.windows import check_adapted

        print(f"checking that the preset windows suit {', '.join(a[0] for a in adapted)}")
        check_adapted(adapted)
    config = run_config(chosen, policies)
    with contextlib.ExitStack() as held:  # the folder's lock, until the report is written
        try:
            folder, earlier = choose_folder(
                out, label or "+".join(names), config, run_dir, resume, overwrite, held
            )
        except OutputError:
            raise
        except OSError as e:  # a full disk, a folder that cannot be made or locked
            where = e.filename or run_dir or out
            raise OutputError(
                f"cannot make or lock the run folder {where}: {e.strerror or e}; nothing was "
                "run. Free some space (or fix the permissions), or choose another --out or "
                "--run-dir"
            ) from None
        return _run_in(
            folder,
            earlier,
            chosen,
            tasks,
            config,
            trust_pickle=trust_pickle,
            argv=argv,
            executor=executor,
            workers=workers,
            ray_address=ray_address,
            progress=progress,
            job_table=job_table,
        )


def _trusting(tasks: list[Task], trust_pickle: bool) -> list[Task]:
    """``tasks``, those of pickled agents marked trusted; refused without ``trust_pickle``.

    Raises:
        SpecError: A pickled agent and no ``trust_pickle``, before any folder or episode.
    """
    out = []
    for t in tasks:
        zipped = pickled_agent(t.policy) if policy_kind(t.policy) == "agent" else None
        if zipped is not None and not trust_pickle:
            raise SpecError(
                f"{zipped} is an SB3 zip saved with pickle: loading it runs any code it "
                "contains. Give --trust-pickle to hpcgym bench only if you trust its source "
                "(hpcgym train saves agents as .safetensors weights plus a JSON card, and "
                "hpcgym.agents.save_agent converts a trusted zip to that form)"
            )
        out.append(dataclasses.replace(t, trust_pickle=True) if zipped is not None else t)
    return out


def _one_kill_rule(sc: scenarios.Scenario, policies: list[str] | None) -> scenarios.Scenario:
    """``sc`` with every policy under one walltime kill rule (``evaluate.kill_rule``).

    A scenario that kills at walltime, played with a policy whose own setting does not (MEBF),
    runs every policy without kills, and says so: one table never compares two worlds.
    """
    kills, why = kill_rule(list(policies or sc.policies), sc.env_id, dict(sc.env_kwargs))
    if kills or sc.env_kwargs.get("kill_on_walltime") is False:
        return sc
    print(f"{sc.name}: {why}")
    return dataclasses.replace(sc, env_kwargs={**sc.env_kwargs, "kill_on_walltime": False})


def _run_in(
    folder: Path,
    earlier: dict[str, Any] | None,
    chosen: Sequence[scenarios.Scenario],
    tasks: list[Task],
    config: dict[str, Any],
    *,
    trust_pickle: bool,
    argv: Sequence[str],
    executor: str,
    workers: int,
    ray_address: str | None,
    progress: bool,
    job_table: str,
) -> int:
    """:func:`run_bench` in its chosen (and locked) folder."""
    names = [sc.name for sc in chosen]
    chash = config_hash(config)
    done: dict[int, TaskOutcome] = {}
    extends: list[dict[str, Any]] = []
    if earlier is not None:
        extends = history(earlier, str(folder / RUN_JSON))
        done = _stored_cells(folder, tasks, chash, accepted_hashes(earlier, extends))
        then = earlier.get("config_hash")
        added = added_agents(earlier["config"], config)
        if then != chash and isinstance(then, str) and added:
            extends.append(extension(then, added))
            print(f"the run gains {len(added)} agent(s): {', '.join(added)}")
        # Failed cells run again: their old errors would only mislead.
        (folder / "failures.csv").unlink(missing_ok=True)
        shutil.rmtree(folder / FAILURES, ignore_errors=True)
    todo = [i for i in range(len(tasks)) if i not in done]
    ex = resolve_executor(executor, workers, len(todo), ray_address)
    record = run_record(config, argv, {"requested": executor, "ran": ex.name})
    dropped = {sc.name: dropped_record(sc.env_id, dict(sc.env_kwargs)) for sc in chosen}
    if any(d is not None for d in dropped.values()):  # what drop_oversized left out
        record["dropped_jobs"] = {name: d for name, d in dropped.items() if d is not None}
    if trust_pickle:  # which pickled agents the flag let run; --from and --resume need it again
        pickled = {pickled_agent(t.policy) for t in tasks if t.trust_pickle}
        record["trust_pickle"] = sorted(str(p.resolve()) for p in pickled if p is not None)
    if extends:
        record[EXTENDS] = extends
    if earlier is not None:
        started = earlier.get("started")
        record["started"] = started if isinstance(started, str) else record["started"]
        record["sessions"] = _sessions(earlier.get("sessions"))
    session: dict[str, Any] = {
        "started": now_utc(),
        "executor": ex.describe(),
        "cells_run": 0,
        "job_table": job_table,
    }
    record.setdefault("sessions", []).append(session)
    try:
        write_text(folder / RUN_JSON, _json(record))
    except OSError as e:
        raise OutputError(
            f"{_cannot_write(folder / RUN_JSON, e)}; nothing was run. Free some space (or fix "
            "the folder's permissions), or choose another --out or --run-dir"
        ) from None
    reused = f", {len(done)} already done" if done else ""
    print(f"{len(tasks)} episodes{reused}; running {len(todo)} on {ex.describe()}")
    print(f"run folder: {folder.resolve()}")

    failures: dict[int, TaskFailure] = {}
    bar = _Progress(len(todo), progress)
    t0, c0 = time.perf_counter(), time.process_time()
    task_cpu = [0.0]

    def store(k: int, outcome: Outcome) -> None:
        # A cell counts (in run.json too) only once its file is written: a cell that could not
        # be stored is run again by --resume.
        i = todo[k]
        if isinstance(outcome, TaskFailure):
            path = failure_path(folder, outcome)
            _stored(path, lambda: save_failure(folder, outcome))
            failures[i] = outcome
        else:
            path = task_cell(folder, tasks[i])
            _stored(path, lambda: save_cell(path, outcome, chash))
            done[i] = outcome
            task_cpu[0] += outcome.cpu_seconds
        session["cells_run"] += 1
        bar.step(f"{tasks[i].scenario.name} {outcome_label(outcome)} seed {tasks[i].seed}")

    def close(status: str, error: str | None = None) -> None:
        session["wall_seconds"] = round(time.perf_counter() - t0, 3)
        # This process, plus what each episode took in its worker (measured there).
        own = time.process_time() - c0
        session["cpu_seconds"] = round(own + (task_cpu[0] if ex.name != "serial" else 0.0), 3)
        session["finished"] = now_utc()
        sessions = record["sessions"]
        record["wall_seconds"] = round(sum(s.get("wall_seconds", 0.0) for s in sessions), 3)
        record["cpu_seconds"] = round(sum(s.get("cpu_seconds", 0.0) for s in sessions), 3)
        record["cells"] = {"total": len(tasks), "done": len(done), "failed": len(failures)}
        record["status"] = status
        if error is not None:
            record["error"] = error
        else:
            record.pop("error", None)
        _stored(folder / RUN_JSON, lambda: write_text(folder / RUN_JSON, _json(record)))

    def stop(e: _NotStored) -> OutputError:
        """Record the failed write in run.json (if it can be written) and say what to do."""
        try:
            close("failed", e.message)
            unsaved = ""
        except _NotStored:
            unsaved = f" ({RUN_JSON} could not be updated either)"
        return OutputError(
            f"{e.message}{unsaved}; {len(done)} of {len(tasks)} episodes are stored in {folder}. "
            f"Free some space (or fix the folder), then continue with: {resume_command}"
        )

    resume_command = f"hpcgym bench --from {folder / RUN_JSON} --run-dir {folder} --resume"
    if trust_pickle:
        resume_command += " --trust-pickle"
    try:
        execute([tasks[i] for i in todo], ex, workers, store)
    except _NotStored as e:
        bar.close()
        raise stop(e) from None
    except KeyboardInterrupt:
        bar.close()
        close("interrupted")
        print(
            f"interrupted: {len(done)} of {len(tasks)} episodes are stored in {folder}; "
            f"continue with: {resume_command}",
            file=sys.stderr,
        )
        return 130
    except BaseException:
        bar.close()
        close("crashed")
        raise
    bar.close()
    outcomes = [done[i] for i in range(len(tasks)) if i in done]
    failed = [failures[i] for i in sorted(failures)]
    metrics = {sc.name: sc.metric for sc in chosen}
    title = "hpcgym bench: " + ", ".join(names)
    notes = {sc.name: episodes_note(sc) for sc in chosen}
    best = {sc.name: sc.best_heuristic for sc in chosen if sc.best_heuristic}
    methods: dict[str, str] = {}
    for t in tasks:  # a table name's method, from the policy it names (a sweep: a member)
        if best and t.name not in methods:
            methods[t.name] = method_of(t.policy)
    try:
        board, written = write_report(
            outcomes, folder, title, metrics, failed, job_table, notes, best, methods
        )
    except OSError as e:  # the stored cells stay; --resume writes the report again
        raise stop(_NotStored(f"cannot write the report in {folder}: {e.strerror or e}")) from None
    except BaseException:
        close("crashed")
        raise
    try:
        close(run_status(len(outcomes), len(failed)))
    except _NotStored as e:
        raise OutputError(f"{e.message}; the report is written, in {folder}") from None
    print(
        f"{session['cells_run']} episodes in {session['wall_seconds']:.1f} s "
        f"(CPU {session['cpu_seconds']:.1f} s) on {ex.describe()}"
    )
    print(terminal(board))
    for name, heuristic in best.items():
        print(f"{name}: {best_heuristic_line(heuristic).replace('**', '')}")
    if (folder / "verdicts.csv") in written:
        import pandas as pd

        for line in agent_lines(pd.read_csv(folder / "verdicts.csv")):
            print(line)
    for f in failed:
        print(f"FAILED: {f.policy} on {f.scenario}, episode seed {f.seed}: {f.error}")
    if failed and not outcomes:
        print(f"every episode failed ({len(failed)}): no results, only failures.csv")
    if failed:
        print(f"errors and tracebacks: {folder.resolve() / 'failures.csv'}; rerun them: --resume")
    print(f"results, leaderboard and run.json: {folder.resolve()}")
    if job_table == "none" and outcomes:
        print(
            "no job table (--job-table none); the stored cells hold every job: "
            f"hpcgym bench --from {folder / RUN_JSON} --run-dir {folder} --resume writes it"
        )
    plots = [p for p in written if p.suffix == ".png"]
    if plots:
        print(f"plots ({len(plots)}): {plots[0].parent.resolve()}")
    return 1 if failed else 0


def _stored_cells(
    folder: Path, tasks: list[Task], chash: str, earlier: frozenset[str]
) -> dict[int, TaskOutcome]:
    """The cells of ``tasks`` stored in ``folder`` (by index); a damaged one is left to run again.

    ``earlier``: the hashes of the configurations this run extends (their cells are its own).

    Temporary files a killed run left behind (``hpcgym.atomic``'s) are removed first.

    Raises:
        SpecError: A cell was stored by a run of another configuration.
    """
    for tmp in folder.rglob(".*.tmp"):
        if _temporary(tmp):
            tmp.unlink(missing_ok=True)
    done: dict[int, TaskOutcome] = {}
    for i, t in enumerate(tasks):
        path = task_cell(folder, t)
        if not path.is_file():
            continue
        try:
            done[i] = load_cell(path, t, chash, earlier)
        except DamagedCell as e:
            print(f"hpcgym: warning: {path}: {e}; running it again", file=sys.stderr)
    return done


def _sessions(recorded: Any) -> list[dict[str, Any]]:
    """The sessions a resumed run.json records, keeping only sessions and numeric times.

    A hand-edited file may hold anything there.
    """
    if not isinstance(recorded, list):
        return []
    kept = []
    for s in recorded:
        if isinstance(s, dict):
            times = ("wall_seconds", "cpu_seconds")
            kept.append({k: v for k, v in s.items() if k not in times or _seconds(v)})
    return kept


def _seconds(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value >= 0


class _NotStored(Exception):
    """A file of the run folder could not be written (a full disk, ...): the one-line message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _cannot_write(path: Path, error: OSError) -> str:
    return f"cannot write {path}: {error.strerror or error}"


def _stored(path: Path, write: Any) -> None:
    """Call ``write()`` (which writes ``path``); an ``OSError`` becomes :class:`_NotStored`."""
    try:
        write()
    except OSError as e:
        raise _NotStored(_cannot_write(path, e)) from None


def run_status(done: int, failed: int) -> str:
    """``run.json``'s final status after the report.

    ``complete``, ``complete, with failed episodes``, or ``failed`` (every episode failed).
    """
    if not failed:
        return "complete"
    return "failed" if not done else "complete, with failed episodes"


def outcome_label(outcome: Outcome) -> str:
    """The policy of an outcome, for progress lines."""
    return outcome.policy if isinstance(outcome, TaskFailure) else str(outcome.row["policy"])


def from_record(path: str) -> tuple[list[scenarios.Scenario], list[str] | None]:
    """The scenarios and policies a recorded run (its ``run.json``) ran (``bench --from``)."""
    record = read_record(Path(path))
    try:
        chosen, policies = config_scenarios(record["config"])
    except SpecError as e:
        raise SpecError(
            f"{path}: {e}. Fix the file, or start a new run with --scenario and --policy"
        ) from None
    check_agents_unchanged(
        record["config"].get("agents"),
        run_config(chosen, policies)["agents"],
        path,
        "To benchmark the new weights, start a new run without --from (--scenario and "
        "--policy); to repeat the recorded run, restore the weights it used.",
    )
    print(
        f"repeating the run recorded in {path} (hpcgym {record.get('hpcgym_version')}, "
        f"commit {record.get('git_commit') or 'unknown'})"
    )
    for sc in chosen:
        try:
            now = scenarios.get(sc.name)
        except SpecError:
            continue
        if dataclasses.replace(now, policies=sc.policies) != sc:  # policies: --with-defaults
            print(f"note: {sc.name} differs from the registered one now; running the recorded one")
    return chosen, policies


def run_options(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """The keyword arguments of :func:`run_bench` that the ``bench`` command line sets."""
    return {
        "out": Path(args.out),
        "run_dir": Path(args.run_dir) if args.run_dir else None,
        "resume": args.resume,
        "overwrite": args.overwrite,
        "executor": args.executor,
        "workers": args.workers,
        "ray_address": args.ray_address,
        "argv": argv,
        "progress": not args.no_progress,
        "job_table": args.job_table,
        "trust_pickle": args.trust_pickle,
    }
