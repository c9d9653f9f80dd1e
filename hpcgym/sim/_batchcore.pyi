"""Type stub of the C batch core (``_batchcore.c``): ``hpcgym.sim.batch`` runs, ``rigid_specs``."""

from typing import Any

def run(
    policy: int,
    capacity: int,
    grace: float,
    kill: bool,
    submit: list[float],
    work: list[object],
    wall: list[object],
    size: list[int],
) -> tuple[bytes, bytes, bytes, float, float, int, int, int, int, float, bytes, bytes]: ...
def run_specs(
    policy: int,
    capacity: int,
    grace: float,
    kill: bool,
    cls: type,
    objects: list[Any],
    fields: tuple[Any, ...],
    checks: tuple[Any, ...],
) -> tuple[Any, ...] | bool | None: ...
def set_column(descr: object, objects: list[object], values: object, per_object: bool) -> None: ...
def untrack(objects: list[object]) -> None: ...
def new_objects(cls: type, n: int) -> list[Any]: ...
def fill_rows(
    out: object,
    table: object,
    width: int,
    rows: list[int],
    fits: list[bool] | None,
    offset: int,
    now: float,
    scale: float,
    since: int,
    since_values: list[float],
    until: int,
    until_values: list[float],
) -> None: ...
def get_columns(
    cls: type, objects: list[Any], descrs: tuple[Any, ...], checks: tuple[Any, ...] = ...
) -> tuple[list[Any], ...] | None: ...
def column_stats(
    submit: list[float],
    start: list[float],
    end: list[float],
    work: list[float],
    waste: list[float],
    tau: float,
) -> tuple[float, ...] | None: ...
def put_floats(out: object, offset: int, values: tuple[float, ...]) -> bool: ...
def room_counts(
    out: Any,
    cpu_used: Any,
    mem_used: Any,
    share: Any,
    mem: Any,
    starts: tuple[int, ...],
    eps: float,
) -> None: ...
