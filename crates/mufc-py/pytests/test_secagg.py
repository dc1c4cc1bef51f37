"""SecAgg over sketches from Python (bytes in, bytes out): the server
decodes exactly the sum of the clients it holds, survives clients that
drop at any step up to the threshold, fails (never a wrong sum) beyond it,
and a client refuses messages that are not its own."""

import random
from collections import Counter

import pytest

from mufc import DecodeError, MufcError, ProtocolError, agg

SESSION = bytes(range(32, 64))
STEPS = 4  # the client answers: directory, masking, consistency, unmasking


def run(p, data, threshold, silent=None, round_=0):
    """One round; `silent(c, step)` makes client c miss a step (0: its
    first message) and every later one."""
    ring = sorted(data)
    clients = {
        c: agg.SecAggClient(agg.Sketch(p, data[c]), c, ring, threshold, SESSION, round_)
        for c in ring
    }
    server = agg.SecAggServer(p, ring, threshold, SESSION, round_)
    off = set()

    def answer(c, step, message=None):
        if c in off or (silent and silent(c, step)):
            off.add(c)
            return
        reply = clients[c].first_message() if message is None else clients[c].handle(message)
        server.receive(reply)

    for c in ring:
        answer(c, 0)
    step = 0
    while (msgs := server.advance()) is not None:
        step += 1
        for c, m in msgs:
            answer(c, step, m)
    return server


def total(data, clients):
    out = Counter()
    for c in clients:
        for k, v in data[c]:
            out[k] += v
    return sorted(out.items())


def draw(rng, n):
    return {c: [(k, rng.randint(1, 9)) for k in rng.sample(range(1, 500), 2)] for c in range(1, n + 1)}


def test_every_client_answers_and_the_sum_decodes():
    rng = random.Random(1)
    data = draw(rng, 5)
    p = agg.SketchParams(10, 500, max_count=1000)
    server = run(p, data, threshold=3)
    assert server.included == [1, 2, 3, 4, 5] and server.dropped == []
    assert server.decode() == total(data, data)


@pytest.mark.parametrize("trial", range(12))
def test_dropouts_at_random_steps_leave_the_sum_of_those_held(trial):
    # The strategy drawn: which clients go silent, and from which step.
    rng = random.Random(100 + trial)
    data = draw(rng, 6)
    p = agg.SketchParams(12, 500, max_count=1000)
    gone = {c: rng.randint(0, STEPS) for c in rng.sample(sorted(data), rng.randint(1, 2))}
    # Threshold 4 of 6 (SecAgg against a server that lies about dropouts
    # needs 2t > h): two may drop.
    server = run(p, data, threshold=4, silent=lambda c, step: c in gone and step >= gone[c])
    held = server.included
    # A client that sent its masked input (it went silent at the
    # consistency step or later) is in the sum; one that did not is out.
    assert held == sorted(c for c in data if c not in gone or gone[c] >= 3), (gone, held)
    assert server.decode() == total(data, held)


def test_too_many_dropouts_fail_the_round_never_a_wrong_sum():
    rng = random.Random(7)
    data = draw(rng, 4)
    p = agg.SketchParams(8, 500, max_count=1000)
    with pytest.raises(MufcError):
        run(p, data, threshold=3, silent=lambda c, step: c in (1, 2) and step >= 2)


def test_a_client_refuses_messages_not_its_own():
    rng = random.Random(9)
    data = draw(rng, 3)
    p = agg.SketchParams(6, 500, max_count=1000)
    ring = [1, 2, 3]
    clients = {c: agg.SecAggClient(agg.Sketch(p, data[c]), c, ring, 2, SESSION, 0) for c in ring}
    server = agg.SecAggServer(p, ring, 2, SESSION, 0)
    for c in ring:
        server.receive(clients[c].first_message())
    msgs = dict(server.advance())
    # Client 1 handed client 2's directory: refused, and it still answers
    # its own.
    with pytest.raises(ProtocolError):
        clients[1].handle(msgs[2])
    clients[1].handle(msgs[1])
    with pytest.raises(MufcError):
        clients[2].handle(b"garbage")
    with pytest.raises(ProtocolError, match="taken"):
        clients[3].first_message()
    # A client of another round is refused by the server.
    other = agg.SecAggClient(agg.Sketch(p, data[1]), 1, ring, 2, SESSION, 5)
    with pytest.raises(MufcError):
        agg.SecAggServer(p, ring, 2, SESSION, 0).receive(other.first_message())


def test_seeded_clients_send_the_same_bytes():
    p = agg.SketchParams(4, 100, max_count=10)
    make = lambda: agg.SecAggClient(agg.Sketch(p, [(5, 1)]), 1, [1, 2, 3], 2, SESSION, 0, seed=bytes(32))
    assert make().first_message() == make().first_message()
    fresh = lambda: agg.SecAggClient(agg.Sketch(p, [(5, 1)]), 1, [1, 2, 3], 2, SESSION, 0)
    assert fresh().first_message() != fresh().first_message()
