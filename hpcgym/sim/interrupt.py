"""A hook that lets pending signals in, for loops that run in compiled code.

CPython runs signal handlers (Ctrl-C's ``KeyboardInterrupt`` among them) only when the
interpreter itself executes code. A mypyc-compiled loop that calls nothing but C functions never
does, so the engine calls :func:`let_signals_in`, interpreted on purpose (this module is not in
``setup.py``'s compiled list), every few thousand decision points.
"""

from __future__ import annotations


def let_signals_in() -> None:
    """Do nothing; entering an interpreted function runs any pending signal handler."""
