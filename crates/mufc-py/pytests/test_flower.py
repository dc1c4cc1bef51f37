"""MUFC on Flower's simulation engine: the ServerApp and ClientApp of
`mufc.flower` train and serve forget requests; the model equals the same
parties' in one process, bit for bit, and after a forget it equals
retraining; a client failing at a stage is a dropout at that stage."""

import json
import os

import numpy as np
import pytest

from mufc import MufcKMeans, parties

if os.environ.get("MUFC_REQUIRE_FLOWER"):
    import flwr  # noqa: F401  (CI: Flower must be there)
flwr = pytest.importorskip("flwr")

from flwr.simulation import run_simulation  # noqa: E402

from mufc.flower import client_app, server_app  # noqa: E402


def simulate(tmp_path, data, **settings):
    for c, x in enumerate(data):
        np.save(tmp_path / f"client-{c}.npy", x)
    base = {
        "data-dir": os.fspath(tmp_path),
        "store-dir": os.fspath(tmp_path / "stores"),
        "federation": "test",
        "min-nodes": len(data),
        "stage-timeout": 60.0,
        "out": os.fspath(tmp_path / "model.npy"),
    }
    base.update(settings)
    run_simulation(
        server_app(base),
        client_app(base),
        num_supernodes=len(data),
        backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0}},
    )
    found = sorted(tmp_path.glob("model.npy.*.npy"), key=lambda f: int(f.name.split(".")[2]))
    return {int(f.name.split(".")[2]): np.load(f) for f in found}


def records(n, seed, size=30):
    rng = np.random.default_rng(seed)
    return [
        np.clip(rng.normal((c % 2) * 0.4 - 0.2, 0.08, size=(size, 2)), -0.5, 0.5)
        for c in range(n)
    ]


@pytest.mark.parametrize("masking", ["secagg", "pairwise"])
def test_flower_trains_and_forgets_exactly(tmp_path, masking):
    data = records(4, 1)
    forget = [{"1": [3, 7], "2": [0]}, {"0": [5], "3": [1]}]
    rounds = simulate(
        tmp_path, data, **{"n-clusters": 2, "seed": 5, "masking": masking, "forget": json.dumps(forget)}
    )
    assert sorted(rounds) == [0, 1, 2]
    opts = dict(n_clusters=2, seed=5, masking=masking)
    assert rounds[0].tobytes() == parties.in_process_centroids(data, **opts).tobytes()
    gone = [[], [3, 7], [0], []]
    assert rounds[1].tobytes() == parties.in_process_centroids(data, forgotten=gone, **opts).tobytes()
    gone[0], gone[3] = [5], [1]
    assert rounds[2].tobytes() == parties.in_process_centroids(data, forgotten=gone, **opts).tobytes()


def test_a_lone_request_waits_for_another_clients(tmp_path, capfd):
    # Alone, client 0's round would tell the server its change (the
    # lone-update policy): it waits, and the next request's round serves
    # both.
    data = records(4, 3)
    forget = [{"0": [5]}, {"1": [2]}]
    rounds = simulate(
        tmp_path, data, **{"n-clusters": 2, "seed": 5, "masking": "secagg", "forget": json.dumps(forget)}
    )
    assert sorted(rounds) == [0, 2]
    assert "mufc request 1: waits for requests of other clients (['0'])" in capfd.readouterr().out
    gone = [[5], [2], [], []]
    want = parties.in_process_centroids(data, forgotten=gone, n_clusters=2, seed=5, masking="secagg")
    assert rounds[2].tobytes() == want.tobytes()


STAGES = ["advertise-keys", "share-keys", "masked-input", "consistency-check", "unmasking"]


@pytest.mark.parametrize("stage", range(5))
def test_a_client_failing_at_a_stage_is_a_dropout_there(tmp_path, capfd, stage):
    data = records(5, 2)
    # Client 4 fails from `stage` on: the round goes on without it (SecAgg
    # tolerates it), and the model is that of the clients the sum holds.
    rounds = simulate(
        tmp_path,
        data,
        **{"n-clusters": 2, "seed": 3, "masking": "secagg", "silent-from": json.dumps({"4": stage})},
    )
    assert sorted(rounds) == [0]
    held = [0, 1, 2, 3, 4] if stage >= 3 else [0, 1, 2, 3]
    out = capfd.readouterr().out
    assert f"included {held}, dropped [(4, '{STAGES[stage]}')]" in out, out
    regs = [parties.registration(c, x) for c, x in enumerate(data)]
    server = parties.ServerParty(regs, n_clusters=2, seed=3, masking="secagg")
    assert rounds[0].tobytes() == server.in_process_centroids([data[c] for c in held]).tobytes()


def test_flwr_run_the_example_on_the_simulation_engine(tmp_path, mufc_bin):
    # The README's command: `flwr run examples/flower`, its records from
    # make_data.py, in a Flower home of its own; the local SuperLink it
    # starts is stopped afterwards. The model equals the parties' in one
    # process, after training and after each round of forget requests.
    import subprocess
    import sys

    from conftest import ROOT

    example = ROOT / "examples" / "flower"
    data = tmp_path / "data"
    subprocess.run([sys.executable, example / "make_data.py", data], check=True, capture_output=True)
    # A Flower home of its own, set up as the README says.
    env = dict(os.environ, FLWR_HOME=os.fspath(tmp_path / "flwr-home"))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    before = set(_superlinks())
    out = tmp_path / "model.npy"
    overrides = f"data-dir='{data}' store-dir='{tmp_path / 'stores'}' out='{out}'"
    try:
        nodes = ["flwr", "federation", "simulation-config", "@none/default", "local", "--num-supernodes", "4"]
        subprocess.run(nodes, env=env, capture_output=True, check=True, timeout=120)
        run = subprocess.run(
            ["flwr", "run", os.fspath(example), "--run-config", overrides, "--stream"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        for pid in set(_superlinks()) - before:
            try:
                os.kill(pid, 15)
            except ProcessLookupError:
                pass
    assert run.returncode == 0, run.stdout + run.stderr
    assert "mufc round 2: included [0, 1, 2, 3], dropped []" in run.stdout + run.stderr
    # `mufc fit` on the same records (records.csv, written beside the
    # clients' files) with the same options, and the same requests: the
    # same model, bit for bit, after training and after each request.
    model = tmp_path / "cli.mufc"
    fit = ["fit", "--data", data / "records.csv", "--client-column", "0", "--model", model]
    subprocess.run([mufc_bin, *fit, "--k", "3", "--seed", "7", "--masking", "secagg"], check=True, capture_output=True)
    assert np.load(f"{out}.0.npy").tobytes() == MufcKMeans.open(model).cluster_centers_.tobytes()
    for r, ids in ((1, "63,67,120"), (2, "5,200")):
        subprocess.run([mufc_bin, "forget", "--model", model, "--ids", ids], check=True, capture_output=True)
        cli = MufcKMeans.open(model)
        assert cli.verify()["outcome"] == "equal"
        assert np.load(f"{out}.{r}.npy").tobytes() == cli.cluster_centers_.tobytes(), r


def _superlinks():
    """The pids of the running local SuperLinks (`flwr run` starts one)."""
    import subprocess

    found = subprocess.run(["pgrep", "-f", "flower-superlink|flower-superexec"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]
