"""Speed of an EASY score agent's ranking: the split score against the feature matrix.

:class:`hpcgym.agents.engine.score.LinearEasy` ranks the whole queue at every decision point; it
computes the score's submission-time part once per job and only the waiting-time and fit parts
at each call (``split``). ``matrix`` ranks by the definition at every call,
:func:`hpcgym.agents.engine.score.ranked_by_features` (the feature matrix times the
coefficients), as the class did before (the same ranking: tested in
``tests/agents/test_score.py``). Plays ``--episodes`` 256-job episodes of the Lublin model
(the search's training episodes of seed 0) with the weights of ``agents/score-synlublin-easy``
seed 0 and prints the mean bounded slowdown over them, identical for both. Time it whole:

    farm-bench -n 5 --vs 'python benchmarks/score_easy_speed.py matrix' \\
        -- python benchmarks/score_easy_speed.py split
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hpcgym.agents.cards import load_engine_card
from hpcgym.agents.engine.score import LinearEasy, ranked_by_features
from hpcgym.bench import scenarios
from hpcgym.envs.episodes import episode_for
from hpcgym.sim import Job, SimConfig, Simulator

AGENT = Path(__file__).resolve().parents[1] / "agents" / "score-synlublin-easy" / "s0"


class MatrixRanking(LinearEasy):
    """The ranking through the feature matrix at every call."""

    def ranked(self, sim: Simulator) -> list[Job]:
        return ranked_by_features(self, sim)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ranking", choices=("split", "matrix"))
    parser.add_argument("--episodes", type=int, default=40)
    args = parser.parse_args()
    weights = load_engine_card(AGENT).weights  # type: ignore[union-attr]
    kwargs = {**scenarios.SYNLUBLIN_RIGID, "split": "train"}
    kind = LinearEasy if args.ranking == "split" else MatrixRanking
    total = 0.0
    for seed in range(args.episodes):
        ep = episode_for("hpcgym/Rigid-v0", kwargs, seed)
        sim = Simulator(ep.platform, ep.jobs, SimConfig(kill_on_walltime=True))
        kind(weights).run(sim)
        total += float(sim.result().summary["mean_bsld"])
    print(f"{args.ranking}: mean bounded slowdown {total / args.episodes:.6f}")


if __name__ == "__main__":
    main()
