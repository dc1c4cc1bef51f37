"""The scikit-learn-style estimator over the model store."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Iterable, Sequence

import numpy as np

from mufc._native import DataError, Model


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


class MufcKMeans:
    """Federated K-means with exact unlearning (MUFC), on one machine.

    ``fit`` takes one array of records per client (``n_l x d``, a record a
    row). Every client clusters its own records, sends a masked sketch of
    its quantized centroids, and the server clusters what it decodes of
    the sum (Algorithm 1 of Pan et al., ICLR 2023). ``forget`` removes
    records by id (Algorithm 4): the model then equals, bit for bit, the
    model trained without them, which ``verify`` checks by retraining.

    The model lives in a model store (an SQLite file): ``path``, or a file
    in a temporary directory that goes with the estimator. Training is the
    ``mufc fit`` command's, so the model equals the one ``mufc fit --data
    F --client-column 0 --scale --k K --seed S`` writes for the same
    records in a file ``F``, with the same options.

    Parameters
    ----------
    n_clusters:
        K, the number of centroids of the model.
    seed:
        The seed every random choice derives from (``mufc fit --seed``).
    scale:
        Map the records into the quantizer's box first, by one translation
        per axis and one common factor (``--scale``); the centroids and
        ``predict`` speak the data's coordinates either way. Without it the
        records must already lie in ``[-1/2, 1/2]^d``.
    path:
        Where to keep the model store; ``None`` for a temporary file.
    **options:
        Any other option of ``mufc fit``, by its name with ``_`` for ``-``:
        ``gamma=0.01``, ``masking="pairwise"``, ``client_k="auto"``,
        ``min_updating_clients=1``, ``max_defer="1d"``... ``True`` passes a
        bare flag; ``None`` and ``False`` leave the option out. ``mufc fit
        --help`` lists them with their defaults.

    Example
    -------
    >>> import numpy as np
    >>> from mufc import MufcKMeans
    >>> rng = np.random.default_rng(0)
    >>> clients = [rng.normal(c % 2 * 5.0, 1.0, size=(40, 2)) for c in range(3)]
    >>> km = MufcKMeans(n_clusters=2, seed=1).fit(clients)
    >>> km.cluster_centers_.shape
    (2, 2)
    >>> report = km.forget([0, 45])          # record ids: data rows by default
    >>> km.verify()["outcome"]
    'equal'
    """

    def __init__(
        self,
        n_clusters: int = 10,
        *,
        seed: int = 0,
        scale: bool = True,
        path: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> None:
        self.n_clusters = n_clusters
        self.seed = seed
        self.scale = scale
        self.path = path
        self.options = options
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.model_: Model | None = None

    # scikit-learn's parameter protocol.
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {
            "n_clusters": self.n_clusters,
            "seed": self.seed,
            "scale": self.scale,
            "path": self.path,
            **self.options,
        }

    def set_params(self, **params: Any) -> "MufcKMeans":
        for key, value in params.items():
            if key in ("n_clusters", "seed", "scale", "path"):
                setattr(self, key, value)
            else:
                self.options[key] = value
        return self

    def _store_path(self) -> tuple[str, bool]:
        """The store's file, and whether an earlier fit of this estimator
        wrote it (then a new fit replaces it, keeping its tombstones)."""
        if self.path is not None:
            path = os.fspath(self.path)
            return path, self.model_ is not None and os.fspath(self.model_.path) == path
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mufc-")
        path = os.path.join(self._tmp.name, "model.mufc")
        return path, os.path.exists(path)

    def _argv(self, path: str, replace: bool) -> list[str]:
        argv = ["--k", str(self.n_clusters), "--seed", str(self.seed), "--model", path]
        if self.scale:
            argv.append("--scale")
        if replace:
            argv.append("--force")
        for name, value in self.options.items():
            if value is None or value is False:
                continue
            if value is True:
                argv.append(_flag(name))
            elif isinstance(value, (list, tuple)):
                argv += [_flag(name), ",".join(str(v) for v in value)]
            else:
                argv += [_flag(name), str(value)]
        return argv

    def fit(
        self,
        X: Sequence[Any],
        ids: Sequence[Iterable[int | str]] | None = None,
    ) -> "MufcKMeans":
        """Trains on one array of records per client.

        ``ids`` gives each client's record ids (integers or strings, unique
        over all clients); by default a record's id is its row in the
        clients' arrays stacked in order (``mufc fit``'s data row).
        """
        if isinstance(X, np.ndarray) or not isinstance(X, (list, tuple)):
            raise DataError("X must be a list with one array of records (n_l x d) per client")
        if not X:
            raise DataError("X holds no client")
        arrays = [np.ascontiguousarray(np.asarray(x, dtype=np.float64)) for x in X]
        for c, a in enumerate(arrays):
            if a.ndim != 2:
                raise DataError(f"client {c}: expected a 2-D array (n_l x d), got {a.ndim}-D")
            if a.shape[1] != arrays[0].shape[1]:
                raise DataError(
                    f"client {c}: {a.shape[1]} features, client 0 has {arrays[0].shape[1]}"
                )
        points = np.concatenate(arrays, axis=0)
        clients = [c for c, a in enumerate(arrays) for _ in range(a.shape[0])]
        if ids is None:
            record_ids = [str(i) for i in range(points.shape[0])]
        else:
            if len(ids) != len(arrays):
                raise DataError(f"ids has {len(ids)} lists for {len(arrays)} clients")
            record_ids = []
            for c, (a, client_ids) in enumerate(zip(arrays, ids)):
                these = [str(i) for i in client_ids]
                if len(these) != a.shape[0]:
                    raise DataError(f"client {c}: {len(these)} ids for {a.shape[0]} records")
                record_ids += these
        path, replace = self._store_path()
        model, report = Model.fit(self._argv(path, replace), points, clients, record_ids)
        self.model_ = model
        self.fit_report_ = json.loads(report)
        self.n_features_in_ = points.shape[1]
        return self

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> "MufcKMeans":
        """The estimator of an existing model store (``mufc fit``'s or an
        earlier estimator's), checked as it opens."""
        est = cls(path=path)
        est.model_ = Model.open(os.fspath(path))
        est.n_features_in_ = est.model_.dim
        return est

    def _model(self) -> Model:
        if self.model_ is None:
            raise DataError("this MufcKMeans is not fitted yet: call fit first")
        return self.model_

    @property
    def cluster_centers_(self) -> np.ndarray:
        """The model's centroids (``k x d``), in the data's coordinates."""
        return self._model().centroids()[0]

    @property
    def cluster_weights_(self) -> np.ndarray:
        """How many records each centroid stands for."""
        return self._model().centroids()[1]

    def predict(self, X: Any) -> np.ndarray:
        """The index of the nearest centroid of each row of ``X``."""
        a = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
        if a.ndim != 2:
            raise DataError(f"expected a 2-D array (n x d), got {a.ndim}-D")
        return self._model().predict(a)

    def forget(self, ids: Iterable[int | str]) -> dict[str, Any]:
        """Forgets the records ``ids`` (one request): they are erased at
        once; the model's update runs now, or waits for another client's
        request when the privacy policy says so (``outcome`` is then
        ``"deferred"``; ``flush`` runs it). Returns the request's report,
        as ``mufc forget --json`` writes it."""
        return json.loads(self._model().forget([str(i) for i in ids]))

    def flush(self) -> dict[str, Any] | None:
        """Runs every waiting model update now; its report, or ``None``."""
        report = self._model().flush()
        return None if report is None else json.loads(report)

    def verify(self) -> dict[str, Any]:
        """Retrains from the records held and compares, bit for bit.
        ``outcome`` is ``"equal"``, ``"pending"`` (an update waits),
        ``"withdrawn"`` or ``"different"`` (with ``differences``); the
        object is ``mufc verify --json``'s."""
        return json.loads(self._model().verify())

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"MufcKMeans(n_clusters={self.n_clusters}, seed={self.seed}{extra})"
