"""Same bytes everywhere: the wheel's messages of one round equal the Rust
crate's (`crates/syndrome-agg/tests/wheel_kat.rs`), from the same keys,
seeds and data, byte for byte."""

import json

from conftest import ROOT
from mufc import agg

KAT = json.loads((ROOT / "crates/syndrome-agg/tests/vectors/wheel_kat.json").read_text())
SESSION, ROUND = bytes([7] * 32), 3
DATA = {1: [(10, 1), (500, 2)], 2: [(10, 3)], 3: [(999, 4)]}


def params():
    return agg.SketchParams(4, 1000, max_count=100)


def test_pairwise_messages_are_the_rust_crates():
    p = params()
    keys = {i: agg.KeyPair(bytes([i] * 32)) for i in DATA}
    for i, entries in DATA.items():
        peers = [(j, k.public_key) for j, k in keys.items() if j != i]
        m = agg.Sketch(p, entries).mask_pairwise(keys[i], i, peers, SESSION, ROUND)
        assert m.hex() == KAT[f"pairwise-{i}"], i


def test_dealt_messages_are_the_rust_crates():
    p = params()
    ring = [(i, bytes([0x10 + i] * 32)) for i in DATA]
    seals, correction = agg.deal(p, SESSION, ROUND, ring, 0, seed=bytes([9] * 32))
    assert correction.hex() == KAT["dealt-correction"]
    for (i, key), (j, seal) in zip(ring, seals):
        assert i == j and seal.hex() == KAT[f"dealt-seal-{i}"]
        seed = agg.open_dealt_seed(key, SESSION, ROUND, i, [1, 2, 3], seal)
        m = agg.Sketch(p, DATA[i]).mask_seeded(seed, i, SESSION, ROUND)
        assert m.hex() == KAT[f"dealt-{i}"], i


def test_the_rust_crates_messages_decode_in_the_wheel():
    p = params()
    for prefix in ("pairwise-", "dealt-"):
        server = agg.Aggregator(p, SESSION, ROUND, 3)
        for name, hexed in KAT.items():
            if name.startswith(prefix) and "seal" not in name:
                server.accept(bytes.fromhex(hexed))
        assert server.decode() == [(10, 4), (500, 2), (999, 4)]
