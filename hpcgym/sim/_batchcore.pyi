"""Type stub of the C batch core (``_batchcore.c``); ``hpcgym.sim.batch`` is its only caller."""

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
def set_column(descr: object, objects: list[object], values: object, per_object: bool) -> None: ...
