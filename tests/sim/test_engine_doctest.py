"""The examples in the simulator's docstrings run and give what they show.

The examples are read from the source file: a compiled simulator (see ``setup.py``) keeps no
docstrings, but the examples must hold for whichever build is installed, and they run against it.
"""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import hpcgym.sim.simulator


def test_simulator_docstring_examples():
    source = Path(hpcgym.sim.simulator.__file__).with_name("simulator.py")
    spec = importlib.util.spec_from_file_location("simulator_source", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, "the simulator module lost its docstring examples"
    assert result.failed == 0
