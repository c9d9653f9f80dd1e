"""Agents that need torch: SB3 networks, how they are trained, saved and played.

- training: :mod:`~hpcgym.agents.rl.train` (``hpcgym train``:
  :mod:`~hpcgym.agents.rl.train_command`; seed sweeps: :mod:`~hpcgym.agents.rl.sweep`), the
  learner :mod:`~hpcgym.agents.rl.lean_ppo`, the networks :mod:`~hpcgym.agents.rl.networks`
  (built by :mod:`~hpcgym.agents.rl.make`), vectorised envs :mod:`~hpcgym.agents.rl.vec`, the
  resize guard :mod:`~hpcgym.agents.rl.guard`, relative rewards
  :mod:`~hpcgym.agents.rl.reference`, imitation pre-training :mod:`~hpcgym.agents.rl.imitation`,
  and the callbacks :mod:`~hpcgym.agents.rl.callbacks`, :mod:`~hpcgym.agents.rl.checkpoint`,
  :mod:`~hpcgym.agents.rl.progress`, :mod:`~hpcgym.agents.rl.validation`;
- saved agents: :mod:`~hpcgym.agents.rl.saved` (weights and card, nothing unpickled; the files'
  names are :mod:`hpcgym.agents.files`), checked by :mod:`~hpcgym.agents.rl.weights_check`;
- playing: :mod:`~hpcgym.agents.rl.env_policy` (the policy contract), decoding an action
  :mod:`~hpcgym.agents.rl.decode`;
- :mod:`~hpcgym.agents.rl.distill_fit`: fitting distilled planners' networks and ``hpcgym
  distill`` (the distilled planners themselves play without torch: :mod:`hpcgym.agents.engine`).

The networks, the learner, the callbacks and the vectorised envs import torch or
stable-baselines3 when imported; training's entry point and saved agents' cards load them when
used, so ``import hpcgym.agents`` stays light.
"""
