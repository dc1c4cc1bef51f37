#!/usr/bin/env python3
"""MUFC rounds on Flower's simulation engine against the same rounds driven
in one process, at 10 and 100 clients.

Each trial runs, alternated: (a) `mufc.flower`'s ServerApp and ClientApp on
`flwr.simulation.run_simulation` (Ray backend, one CPU per ClientApp), and
(b) the same parties driven by `mufc.parties.run_round_batched` with direct
calls, as many clients at once as there are CPUs, as the Ray backend runs
them (a client's handlers open its store for every message in both). Both
run training (round 0) and one round of forget requests (round 1); the
ServerApp writes each round's wall time (`<out>.json`). Prints, per client
count and round, the medians over the trials: our time (b), the Flower
round (a), and Flower's engine cost per round (a - b), with the machine's
load. Both models are checked equal, bit for bit.

Run by hand, never in CI:  python3 benches/peers/flower_rounds.py [trials]
Needs: the mufc wheel and flwr[simulation]==1.42.0 in the environment.
"""

import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import flwr
from flwr.simulation import run_simulation

from mufc import parties
from mufc.flower import client_app, server_app

SIZES = (10, 100)
POINTS = 100  # each client's records
FORGET = {"1": [3, 7], "2": [0]}


def records(n, seed):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-0.35, 0.35, size=(5, 2))
    out = []
    for c in range(n):
        mine = centres[[c % 5, (c + 2) % 5]]
        labels = rng.integers(0, 2, size=POINTS)
        out.append(np.clip(mine[labels] + rng.normal(0, 0.03, size=(POINTS, 2)), -0.5, 0.5))
    return out


def on_flower(data, tmp):
    for c, x in enumerate(data):
        np.save(os.path.join(tmp, f"client-{c}.npy"), x)
    out = os.path.join(tmp, "model.npy")
    settings = {
        "data-dir": tmp,
        "store-dir": os.path.join(tmp, "flower-stores"),
        "federation": "bench",
        "n-clusters": 5,
        "seed": 1,
        "masking": "secagg",
        "min-nodes": len(data),
        "stage-timeout": 600.0,
        "forget": json.dumps([FORGET]),
        "out": out,
    }
    run_simulation(
        server_app(settings),
        client_app(settings),
        num_supernodes=len(data),
        backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0}},
    )
    with open(out + ".json") as f:
        seconds = [r["seconds"] for r in json.load(f)["rounds"]]
    return seconds, np.load(out)


def in_process(data, tmp):
    paths = {c: os.path.join(tmp, f"direct-{c}.db") for c in range(len(data))}
    for c, x in enumerate(data):
        parties.client_create(paths[c], f"site-{c}", x)
    ids = list(range(len(data)))
    seconds = []
    start = time.perf_counter()
    regs = [parties.client_registration(paths[c], c) for c in ids]
    server = parties.ServerParty(regs, n_clusters=5, seed=1, masking="secagg")

    # As many clients at once as Flower's Ray backend runs (one CPU each):
    # the handlers release the GIL.
    pool = ThreadPoolExecutor(max_workers=os.cpu_count())

    def send_all(transcripts):
        answers = pool.map(lambda ct: parties.client_step(paths[ct[0]], ct[0], ct[1]), transcripts.items())
        return dict(zip(transcripts, answers))

    def commit_all(transcripts, included):
        list(pool.map(lambda ct: parties.client_commit(paths[ct[0]], ct[0], ct[1], ct[0] in included), transcripts.items()))

    parties.run_round_batched(server, ids, send_all, commit_all)
    seconds.append(time.perf_counter() - start)
    start = time.perf_counter()
    for c, pts in FORGET.items():
        parties.client_forget(paths[int(c)], int(c), pts)
    parties.run_round_batched(server, ids, send_all, commit_all)
    seconds.append(time.perf_counter() - start)
    return seconds, server.centroids()


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print(f"flwr {flwr.__version__}, {os.cpu_count()} CPUs, load before: {os.getloadavg()}")
    for n in SIZES:
        data = records(n, n)
        ours, theirs = [], []
        for t in range(trials):
            for run in (("flower", on_flower), ("direct", in_process)) if t % 2 == 0 else (
                ("direct", in_process),
                ("flower", on_flower),
            ):
                with tempfile.TemporaryDirectory() as tmp:
                    seconds, model = run[1](data, tmp)
                (theirs if run[0] == "flower" else ours).append((seconds, model))
        for a, b in zip(ours, theirs):
            assert a[1].tobytes() == b[1].tobytes(), "the models differ"
        for r, name in enumerate(("training", "forget")):
            o = statistics.median(s[r] for s, _ in ours)
            f = statistics.median(s[r] for s, _ in theirs)
            print(
                f"{n:4d} clients, {name:8s} round: ours {o:7.3f} s, on Flower {f:7.3f} s, "
                f"Flower's engine {f - o:7.3f} s ({f / o:5.1f}x)"
            )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
