"""Sparse secure aggregation: the server learns only the sum.

Each client holds a sparse vector (a histogram, a sparse gradient) over a
huge key domain; it sends the syndromes of its vector, masked so that one
message alone is uniformly random, and the server decodes the exact sum,
paying for the number of distinct keys of the sum, not for the domain.
The bytes are those of the Rust crate ``syndrome-agg``: a Python party and
a Rust party of one round interoperate. When clients may drop out, the
round runs SecAgg (:class:`SecAggClient`, :class:`SecAggServer`: Bonawitz
et al. 2017 over the complete graph, every step bytes in and bytes out).

Example (pairwise masks, three clients):

>>> from mufc import agg
>>> params = agg.SketchParams(capacity=16, key_domain=70_000, max_count=10**6)
>>> session, round_ = bytes(32), 0          # a fresh session id in practice
>>> keys = {cid: agg.KeyPair() for cid in (1, 2, 3)}
>>> data = {1: [(1042, 3)], 2: [(1042, 5), (55000, 2)], 3: [(7, 2)]}
>>> messages = []
>>> for cid, entries in data.items():
...     peers = [(p, k.public_key) for p, k in keys.items() if p != cid]
...     sketch = agg.Sketch(params, entries)
...     messages.append(sketch.mask_pairwise(keys[cid], cid, peers, session, round_))
>>> server = agg.Aggregator(params, session, round_, min_clients=3)
>>> for m in messages:
...     server.accept(m)
>>> assert server.decode() == [(7, 2), (1042, 8), (55000, 2)]
"""

from mufc._native import (
    Aggregator,
    KeyPair,
    SecAggClient,
    SecAggServer,
    Sketch,
    SketchParams,
    deal,
    open_dealt_seed,
)

__all__ = [
    "SketchParams",
    "Sketch",
    "KeyPair",
    "Aggregator",
    "deal",
    "open_dealt_seed",
    "SecAggClient",
    "SecAggServer",
]
