"""The examples in the simulator's docstrings run and give what they show."""

from __future__ import annotations

import doctest

import hpcgym.sim.simulator


def test_simulator_docstring_examples():
    result = doctest.testmod(hpcgym.sim.simulator, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, "the simulator module lost its docstring examples"
    assert result.failed == 0
