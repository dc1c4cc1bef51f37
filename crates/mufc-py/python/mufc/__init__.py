"""Machine unlearning of federated clusters (MUFC), from Python.

Two layers, both the Rust crates' own code (the wheel's ``mufc._native``):

* :class:`MufcKMeans`, a scikit-learn-style estimator: federated K-means
  over a list of clients' arrays, with exact unlearning (``forget``) and a
  check that the model equals retraining (``verify``). It trains exactly as
  the ``mufc fit`` command does on the same records, options and seed, and
  keeps its model in ``mufc``'s model store (an SQLite file).
* :mod:`mufc.agg`, sparse secure aggregation for any federated system:
  sketches of ``(key, count)`` pairs, masked by a dealer's sealed seeds or
  pairwise X25519 masks, summed and decoded by the server.

Every error is a :class:`MufcError` carrying the Rust error's message; bad
input (:class:`ConfigError`, :class:`DataError`, :class:`WireError`) is also
a ``ValueError``.
"""

from mufc._native import (
    ConfigError,
    DataError,
    DecodeError,
    MufcError,
    ProtocolError,
    StoreError,
    WireError,
    __version__,
)
from mufc._estimator import MufcKMeans
from mufc import agg, parties

__all__ = [
    "MufcKMeans",
    "agg",
    "parties",
    "MufcError",
    "ConfigError",
    "DataError",
    "StoreError",
    "DecodeError",
    "WireError",
    "ProtocolError",
    "__version__",
]
