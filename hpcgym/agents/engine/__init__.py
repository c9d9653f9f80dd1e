"""Engine agents: learned schedulers that play on the bare engine, as a baseline does.

They need numpy (and ``cma`` to search), never torch or stable-baselines3 (an import-linter
contract in pyproject.toml and ``tests/test_layers.py`` check it):

- :mod:`~hpcgym.agents.engine.score`: linear job-scoring agents found by CMA-ES;
- :mod:`~hpcgym.agents.engine.order`: linear list orders for evolving jobs, found by CMA-ES;
- :mod:`~hpcgym.agents.engine.cmaes_pool`: the worker pool both searches play candidates in;
- :mod:`~hpcgym.agents.engine.search_command`: ``hpcgym search-score``;
- :mod:`~hpcgym.agents.engine.lookahead`: the planner (sampled futures played forward) and
  ``hpcgym write-planners``;
- :mod:`~hpcgym.agents.engine.distill`: distilled planners (a small network playing as the
  planner would), recorded and played with numpy; fitting them needs torch and lives in
  :mod:`hpcgym.agents.rl.distill_fit` with ``hpcgym distill``;
- :mod:`~hpcgym.agents.engine.cards`: their cards by file name, and the reader of their folders.
"""
