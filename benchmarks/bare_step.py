"""A bare numpy step loop of ``hpcgym/Rigid-v0``'s interaction model: the env's reference.

No engine, no gymnasium, no job objects: what a user would write in an afternoon for the same
interaction. An episode is 256 consecutive jobs of ``lublin_256`` (rigid, one processor a node,
256 nodes) from a random start. At each decision point the agent sees a dict observation of the
env's shapes (cluster ``(1, 4)``, queue ``(32, 15)``, running ``(16, 12)``, time ``(6,)``, fresh
arrays: static rows gathered from a per-episode table, the time columns written per step) and an
int8 mask of 33 entries (advance, start queue slot q); it picks a random legal entry. A start runs
the job on its nodes (ended at ``min(run, walltime)``); advance runs to the next submission or
end, skipping decision points where only advance is legal. The reward is the bounded slowdown
of the jobs that ended, negated. Not the env's exact schedules (the engine's tie rules are not
copied): only its cost per step is the reference.

``bare_steps(jobs, steps, seed)`` returns the episodes finished; ``python benchmarks/bare_step.py
--steps N`` prints steps per CPU second.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time

import numpy as np

QUEUE, RUNNING, NODES, EPISODE = 32, 16, 256, 256
HOUR, DAY = 3600.0, 86400.0

Jobs = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""Submit, run, walltime (the run time when unknown) and size of every job of the trace."""


def lublin_jobs() -> Jobs:
    """``swf/lublin256-v0``'s jobs as four arrays."""
    from hpcgym.workloads import load

    w = load("swf/lublin256-v0")
    submit = np.array([j.submit for j in w.jobs])
    run = np.array([j.work for j in w.jobs])
    wall = np.array([j.work if j.walltime is None else j.walltime for j in w.jobs])
    size = np.array([j.nodes for j in w.jobs], dtype=np.int64)
    return submit, run, wall, size


def bare_steps(jobs: Jobs, steps: int, seed: int) -> int:
    """Take ``steps`` random masked steps (episodes reset inside); the episodes finished."""
    submit_all, run_all, wall_all, size_all = jobs
    rng = np.random.default_rng(seed)
    episodes = 0
    done = True
    for _ in range(steps):
        if done:
            # Reset: a window of EPISODE jobs, its static observation rows, an empty machine.
            first = int(rng.integers(0, submit_all.size - EPISODE))
            sl = slice(first, first + EPISODE)
            submit = submit_all[sl].tolist()
            run = np.minimum(run_all[sl], wall_all[sl]).tolist()
            size = size_all[sl].tolist()
            est = wall_all[sl]
            static = np.zeros((EPISODE + 1, 15), dtype=np.float32)
            static[:EPISODE, 0] = 1.0
            static[:EPISODE, 2] = est / (est + HOUR)
            static[:EPISODE, 3:6] = np.minimum(1.0, size_all[sl] / NODES)[:, None]
            static[:EPISODE, 6] = 1.0
            running_static = np.zeros((EPISODE + 1, 12), dtype=np.float32)
            running_static[:EPISODE, 0] = 1.0
            running_static[:EPISODE, 1:4] = static[:EPISODE, 3:6]
            running_static[:EPISODE, 4] = 1.0
            t0 = now = submit[0]
            free, nxt, ended, total_bsld = NODES, 0, 0, 0.0
            queue: list[int] = []
            running: list[int] = []
            start_at = [0.0] * EPISODE
            ends: list[tuple[float, int]] = []
            action, done = 0, False
        # The step: apply the action, then run to the next decision point with a choice.
        if action:
            j = queue.pop(action - 1)
            free -= size[j]
            start_at[j] = now
            heapq.heappush(ends, (now + run[j], j))
            running.append(j)
        else:
            while True:
                t_end = ends[0][0] if ends else np.inf
                t_sub = submit[nxt] if nxt < EPISODE else np.inf
                if t_end == np.inf and t_sub == np.inf:
                    done = True
                    break
                now = t_end if t_end <= t_sub else t_sub
                while ends and ends[0][0] == now:
                    _, j = heapq.heappop(ends)
                    free += size[j]
                    running.remove(j)
                    ended += 1
                    total_bsld += max(1.0, (now - submit[j]) / max(run[j], 10.0))
                while nxt < EPISODE and submit[nxt] == now:
                    queue.append(nxt)
                    nxt += 1
                if any(size[j] <= free for j in queue[:QUEUE]):
                    break
        reward = -total_bsld / EPISODE if done else 0.0
        # The observation and the mask.
        window = queue[:QUEUE]
        k = len(window)
        obs_queue = static.take(window + [EPISODE] * (QUEUE - k), axis=0)
        obs_queue[:k, 1] = [(w := now - submit[j]) / (w + HOUR) for j in window]
        fits = [size[j] <= free for j in window]
        obs_queue[:k, 12] = fits
        rwin = running[:RUNNING]
        obs_running = running_static.take(rwin + [EPISODE] * (RUNNING - len(rwin)), axis=0)
        obs_running[: len(rwin), 5] = [(e := now - start_at[j]) / (e + HOUR) for j in rwin]
        clock = now - t0
        gap = submit[nxt] - now if nxt < EPISODE else np.inf
        obs = {
            "cluster": np.array([[free / NODES, free / NODES, 1.0, 0.0]], dtype=np.float32),
            "queue": obs_queue,
            "running": obs_running,
            "time": np.array(
                (
                    clock / (clock + DAY),
                    nxt / EPISODE,
                    ended / EPISODE,
                    len(queue) / (len(queue) + QUEUE),
                    len(running) / (len(running) + RUNNING),
                    gap / (gap + HOUR) if gap < np.inf else 1.0,
                ),
                dtype=np.float32,
            ),
        }
        mask = np.zeros(1 + QUEUE, dtype=np.int8)
        mask[0] = 1
        mask[1 : 1 + k] = fits
        # The agent: a uniformly random legal entry.
        legal = mask.nonzero()[0]  # as ``env_path.random_steps`` does
        action = int(legal[int(rng.random() * legal.size)])
        del obs, reward
        if done:
            episodes += 1
    return episodes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=100_000)
    args = parser.parse_args()
    jobs = lublin_jobs()
    bare_steps(jobs, 2000, 99)
    c0 = time.process_time()
    episodes = bare_steps(jobs, args.steps, 0)
    cpu = time.process_time() - c0
    print(f"bare step loop: {args.steps / cpu:,.0f} steps/s CPU, {episodes} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
