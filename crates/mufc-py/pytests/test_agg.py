"""Sparse secure aggregation from Python: sums, masks, and what a server
or a client that tries to break the round gets."""

import random
from collections import Counter

import pytest

from mufc import DecodeError, MufcError, ProtocolError, WireError, agg

SESSION = bytes(range(32))


def draw(rng: random.Random, clients: int, keys: int, domain: int):
    """Each client's entries, and their sum."""
    data = {}
    for c in range(1, clients + 1):
        chosen = rng.sample(range(1, domain + 1), rng.randint(1, keys))
        data[c] = [(k, rng.randint(1, 9)) for k in chosen]
    total = Counter()
    for entries in data.values():
        for k, v in entries:
            total[k] += v
    return data, sorted(total.items())


def pairwise_round(p, data, round_):
    keys = {c: agg.KeyPair() for c in data}
    out = {}
    for c, entries in data.items():
        peers = [(d, k.public_key) for d, k in keys.items() if d != c]
        out[c] = agg.Sketch(p, entries).mask_pairwise(keys[c], c, peers, SESSION, round_)
    return out


def dealt_round(p, data, round_):
    ring = [(c, bytes([c % 256] * 32)) for c in data]
    seals, correction = agg.deal(p, SESSION, round_, ring)
    out = {0: correction}
    for (c, key), (_, seal) in zip(ring, seals):
        seed = agg.open_dealt_seed(key, SESSION, round_, c, [c for c, _ in ring], seal)
        out[c] = agg.Sketch(p, data[c]).mask_seeded(seed, c, SESSION, round_)
    return out


@pytest.mark.parametrize("masks", [pairwise_round, dealt_round])
@pytest.mark.parametrize("trial", range(5))
def test_the_server_decodes_exactly_the_sum(masks, trial):
    rng = random.Random(trial)
    domain = rng.choice([1000, 2**40, 2**100])
    data, total = draw(rng, rng.randint(2, 6), 5, domain)
    p = agg.SketchParams(max(len(total), 1), domain, max_count=10**6)
    messages = masks(p, data, trial)
    server = agg.Aggregator(p, SESSION, trial, len(messages))
    for m in messages.values():
        server.accept(m)
    assert server.clients == sorted(messages)
    assert server.decode() == total


def test_sketches_add_subtract_and_decode_unmasked():
    p = agg.SketchParams(4, 100, max_count=50, signed=True)
    a, b = agg.Sketch(p, [(3, 5), (9, 1)]), agg.Sketch(p, [(3, 2), (40, -4)])
    a.add(b)
    assert a.decode() == [(3, 7), (9, 1), (40, -4)]
    a.subtract(b)
    assert a.decode() == [(3, 5), (9, 1)]


def test_more_keys_than_the_capacity_is_an_error_not_a_wrong_sum():
    p = agg.SketchParams(3, 1000, max_count=100)
    data = {1: [(1, 1), (2, 1)], 2: [(3, 1), (4, 1), (5, 1)]}
    server = agg.Aggregator(p, SESSION, 0, 2)
    for m in pairwise_round(p, data, 0).values():
        server.accept(m)
    with pytest.raises(DecodeError):
        server.decode()


@pytest.mark.parametrize("trial", range(20))
def test_a_server_that_decodes_one_message_learns_nothing_of_it(trial):
    # The curious server's strategy, drawn: decode a single client's
    # message, or the sum of all but one. Either holds a mask that does
    # not cancel, so it raises, or yields a vector that is not the
    # client's (never a client's entries).
    rng = random.Random(1000 + trial)
    data, _ = draw(rng, 3, 2, 500)
    p = agg.SketchParams(6, 500, max_count=100)
    masks = rng.choice([pairwise_round, dealt_round])
    messages = masks(p, data, trial)
    subset = rng.choice(["one", "all-but-one"])
    victim = rng.choice(sorted(c for c in messages if c != 0))
    chosen = [victim] if subset == "one" else [c for c in messages if c != victim]
    server = agg.Aggregator(p, SESSION, trial, 1)
    for c in chosen:
        server.accept(messages[c])
    try:
        got = server.decode()
    except DecodeError:
        return
    assert got != sorted(data[victim])
    rest = Counter()
    for c, entries in data.items():
        if c != victim:
            for k, v in entries:
                rest[k] += v
    assert got != sorted(rest.items())


def test_bad_bytes_and_replays_are_refused():
    p = agg.SketchParams(4, 1000, max_count=100)
    data = {1: [(5, 1)], 2: [(6, 2)]}
    messages = pairwise_round(p, data, 7)
    server = agg.Aggregator(p, SESSION, 7, 2)
    for bad in (b"", b"\x00" * 5, messages[1][:-3], messages[1] + b"\x00"):
        with pytest.raises(WireError):
            server.accept(bad)
    server.accept(messages[1])
    with pytest.raises(ProtocolError):
        server.accept(messages[1])
    # A message of another round is not taken into this one.
    other = pairwise_round(p, data, 8)
    with pytest.raises(MufcError):
        server.accept(other[2])
    server.accept(messages[2])
    assert server.decode() == [(5, 1), (6, 2)]
    with pytest.raises(ProtocolError, match="already decoded"):
        server.decode()


def test_a_seal_for_another_client_or_round_does_not_open():
    p = agg.SketchParams(2, 100)
    ring = [(1, bytes([1] * 32)), (2, bytes([2] * 32))]
    seals, _ = agg.deal(p, SESSION, 0, ring)
    with pytest.raises(MufcError):
        agg.open_dealt_seed(ring[1][1], SESSION, 0, 2, [1, 2], seals[0][1])
    with pytest.raises(MufcError):
        agg.open_dealt_seed(ring[0][1], SESSION, 1, 1, [1, 2], seals[0][1])
    with pytest.raises(MufcError):
        agg.open_dealt_seed(ring[0][1], SESSION, 0, 1, [1, 2, 3], seals[0][1])


def test_bad_parameters_and_inputs_raise_value_errors():
    with pytest.raises(ValueError):
        agg.SketchParams(0, 100)
    with pytest.raises(ValueError):
        agg.SketchParams(2, -5)
    p = agg.SketchParams(2, 100, max_count=10)
    with pytest.raises(ValueError):
        agg.Sketch(p, [(101, 1)])
    with pytest.raises(ValueError):
        agg.Sketch(p, [("key", 1)])
    with pytest.raises(ValueError):
        agg.KeyPair(b"short")
    with pytest.raises(ValueError):
        agg.Aggregator(p, b"short session", 0, 1)
