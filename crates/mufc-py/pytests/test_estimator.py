"""MufcKMeans: training, forgetting, verifying, and bad input."""

import json
import subprocess

import numpy as np
import pytest

from mufc import ConfigError, DataError, MufcError, MufcKMeans, StoreError


def clients(seed: int, sizes=(60, 45, 80, 30), d: int = 3, k: int = 4):
    """Clients holding Gaussian blobs around k centres (each client two of
    them), in units far from the quantizer's box."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-50, 50, size=(k, d))
    out = []
    for c, n in enumerate(sizes):
        mine = centres[[c % k, (c + 1) % k]]
        labels = rng.integers(0, 2, size=n)
        out.append(mine[labels] + rng.normal(0, 2.0, size=(n, d)))
    return out


def test_fit_predict_and_the_centres_are_in_the_datas_units():
    data = clients(1)
    km = MufcKMeans(n_clusters=4, seed=3).fit(data)
    assert km.cluster_centers_.shape == (4, 3)
    assert int(km.cluster_weights_.sum()) == sum(len(x) for x in data)
    labels = km.predict(np.concatenate(data))
    assert labels.dtype == np.int64 and labels.shape == (215,)
    # Each centre is the mean of a blob: the records of its label are near it.
    allx = np.concatenate(data)
    for j, centre in enumerate(km.cluster_centers_):
        spread = np.linalg.norm(allx[labels == j] - centre, axis=1).mean()
        assert spread < 6.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forget_equals_retraining_bit_for_bit(seed):
    data = clients(seed)
    km = MufcKMeans(n_clusters=4, seed=seed).fit(data)
    before = km.cluster_centers_.tobytes()
    rng = np.random.default_rng(100 + seed)
    gone = sorted(int(i) for i in rng.choice(215, size=6, replace=False))
    report = km.forget(gone)
    if report["outcome"] == "deferred":
        km.flush()
    assert km.model_.num_points == 209
    # `verify` retrains from the records held (each keeping the point id
    # it was trained with, and the configuration resolved at training)
    # and compares every byte of the model and of the clients.
    v = km.verify()
    assert v["outcome"] == "equal" and v["differences"] == []
    assert v["served_digest"] == v["retrained_digest"]
    assert v["served_clients_digest"] == v["retrained_clients_digest"]
    # Not by accident: the model moved.
    assert km.cluster_centers_.tobytes() != before


def test_a_lone_request_waits_then_flush_applies_it():
    km = MufcKMeans(n_clusters=4, seed=5).fit(clients(5))
    before = km.cluster_centers_.copy()
    report = km.forget([3])
    assert report["outcome"] == "deferred" and report["erased_points"] == 1
    assert np.array_equal(km.cluster_centers_, before)
    assert km.verify()["outcome"] == "pending"
    flushed = km.flush()
    assert flushed is not None and flushed["removed_points"] == 1
    assert km.verify()["outcome"] == "equal"
    assert km.flush() is None


def test_the_model_equals_mufc_fit_on_the_same_records(tmp_path, mufc_bin):
    data = clients(7)
    # The records in a file, a client column first, as `mufc fit` reads it.
    rows = [
        ",".join([str(c)] + [repr(float(v)) for v in x])
        for c, a in enumerate(data)
        for x in a
    ]
    csv = tmp_path / "records.csv"
    csv.write_text("\n".join(rows) + "\n")
    model = tmp_path / "cli.mufc"
    opts = ["--k", "4", "--seed", "11", "--scale", "--masking", "pairwise", "--client-k", "6"]
    subprocess.run(
        [mufc_bin, "fit", "--data", csv, "--client-column", "0", "--model", model, *opts],
        check=True,
        capture_output=True,
    )
    km = MufcKMeans(n_clusters=4, seed=11, masking="pairwise", client_k=6).fit(data)
    cli = MufcKMeans.open(model)
    assert km.cluster_centers_.tobytes() == cli.cluster_centers_.tobytes()
    assert np.array_equal(km.cluster_weights_, cli.cluster_weights_)
    # The same request on both: still equal, and equal to retraining.
    gone = [2, 70, 150, 200]
    km.forget(gone)
    out = subprocess.run(
        [mufc_bin, "forget", "--model", model, "--ids", ",".join(map(str, gone)), "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(out.stdout)
    cli = MufcKMeans.open(model)
    assert km.cluster_centers_.tobytes() == cli.cluster_centers_.tobytes()
    assert km.verify()["outcome"] == cli.verify()["outcome"] == "equal"


def test_a_store_keeps_its_tombstones_across_a_refit(tmp_path):
    data = clients(9)
    path = tmp_path / "m.mufc"
    km = MufcKMeans(n_clusters=4, seed=1, path=path).fit(data)
    km.forget([0, 100])
    # The same records again: the forgotten ones do not come back.
    with pytest.raises(MufcError, match="forgot"):
        km.fit(data)
    km.set_params(skip_forgotten=True)
    km.fit(data)
    assert km.model_.num_points == 215 - 2
    # A second estimator on the same file is refused, not overwritten.
    with pytest.raises(StoreError, match="already exists"):
        MufcKMeans(n_clusters=4, path=path).fit(data)


def test_bad_input_raises_clear_errors():
    data = clients(4)
    km = MufcKMeans(n_clusters=4)
    with pytest.raises(DataError, match="not fitted"):
        km.predict(data[0])
    with pytest.raises(DataError, match="one array"):
        km.fit(np.concatenate(data))
    with pytest.raises(DataError, match="features"):
        km.fit([data[0], data[1][:, :2]])
    with pytest.raises(ValueError, match="ids"):
        km.fit(data, ids=[[1, 2]])
    dup = [list(range(len(x))) for x in data]
    with pytest.raises(MufcError, match="record id 0 occurs twice"):
        km.fit(data, ids=dup)
    with pytest.raises(ConfigError, match="no-such-option"):
        MufcKMeans(n_clusters=4, no_such_option=3).fit(data)
    with pytest.raises(ConfigError):
        MufcKMeans(n_clusters=0).fit(data)
    with pytest.raises(ConfigError, match="takes the place of --data"):
        MufcKMeans(n_clusters=4, data="records.csv").fit(data)
    bad = [x.copy() for x in data]
    bad[1][3, 0] = np.nan
    with pytest.raises(DataError):
        km.fit(bad)
    km.fit(data)
    with pytest.raises(DataError):
        km.predict(np.zeros((2, 5)))
    with pytest.raises(DataError):
        km.forget(["no-such-record"])
    # Nothing was lost to the errors.
    assert km.verify()["outcome"] == "equal"
