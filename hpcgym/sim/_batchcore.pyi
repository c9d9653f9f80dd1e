"""Type stub of the C batch core (``_batchcore.c``); ``hpcgym.sim.batch`` is its only caller."""

def run(
    policy: int,
    capacity: int,
    grace: float,
    submit: list[float],
    work: list[float],
    est: list[float],
    wall: list[float],
    size: list[int],
) -> tuple[bytes, bytes, bytes, float, float, int, int, int, int, float, bytes, bytes]: ...
