"""Domain exceptions of hpcgym.

Every message says what was wrong, where (file, line, job id) and what to do about it.
"""

from __future__ import annotations


class HpcGymError(Exception):
    """Base class of every error raised by hpcgym."""


class SpecError(HpcGymError, ValueError):
    """A job, platform or configuration description is inconsistent."""


class CommandError(HpcGymError, ValueError):
    """A scheduler command breaks a rule; the simulator state is unchanged."""


class CapacityError(CommandError):
    """A command would exceed a node's CPU or memory capacity."""


class JobStateError(CommandError):
    """A command does not apply to the job in its current state."""


class SizeError(CommandError):
    """A command asks for a size outside the job's min/max or size rule."""


class StalledError(HpcGymError, RuntimeError):
    """Jobs are waiting but nothing can ever happen unless the scheduler acts."""


class WorkloadError(HpcGymError, ValueError):
    """A workload file or workload description is malformed."""


class OutputError(HpcGymError, OSError):
    """An output file or folder cannot be created or written."""


class WorkerError(HpcGymError, RuntimeError):
    """A worker process (an env of ``hpcgym train --vec-env subproc``) ended unexpectedly."""


def first_line(error: BaseException) -> str:
    """The first line of ``error``'s message, for one-line errors that quote another library's.

    Some (torch's) carry a stack of C++ frames below the message.
    """
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
