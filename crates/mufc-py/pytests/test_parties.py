"""The MUFC parties driven over bytes with stateless clients: the model is
the one the same parties reach in one process, bit for bit, before and
after a removal; a missing answer is a dropout at its step; and a server
that replays a step otherwise gets nothing."""

import os

import numpy as np
import pytest

from mufc import MufcError, ProtocolError, parties


def make(tmp_path, n=4, seed=0, size=30):
    rng = np.random.default_rng(seed)
    data = [
        np.clip(rng.normal((c % 2) * 0.4 - 0.2, 0.08, size=(size, 2)), -0.5, 0.5)
        for c in range(n)
    ]
    paths = {c: os.fspath(tmp_path / f"client-{c}.db") for c in range(n)}
    for c, x in enumerate(data):
        parties.client_create(paths[c], f"site-{c}", x)
    regs = [parties.client_registration(paths[c], c) for c in range(n)]
    return data, paths, regs


def stateless(paths, silent=None):
    """The handlers, each call a fresh open of the client's store;
    `silent(c, step)` makes a client miss a step."""
    def send(c, transcript):
        if silent and silent(c, len(transcript) - 1):
            return None
        return parties.client_step(paths[c], c, transcript)

    def commit(c, transcript, included):
        parties.client_commit(paths[c], c, transcript, included)

    return send, commit


@pytest.mark.parametrize("masking", ["secagg", "pairwise"])
def test_stateless_clients_reach_the_in_process_model_before_and_after_a_removal(tmp_path, masking):
    data, paths, regs = make(tmp_path)
    server = parties.ServerParty(regs, n_clusters=2, seed=5, masking=masking)
    send, commit = stateless(paths)
    report = parties.run_round(server, list(range(4)), send, commit)
    assert report == {"included": [0, 1, 2, 3], "dropped": []}
    want = parties.in_process_centroids(data, n_clusters=2, seed=5, masking=masking)
    assert server.centroids().tobytes() == want.tobytes()
    # Client 1 forgets two points (one may be a seed): the next round
    # serves it, and the model is retraining's without them.
    parties.client_forget(paths[1], 1, [3, 7])
    parties.client_forget(paths[2], 2, [0])
    parties.run_round(server, list(range(4)), send, commit)
    gone = [[], [3, 7], [0], []]
    want = parties.in_process_centroids(data, n_clusters=2, seed=5, masking=masking, forgotten=gone)
    assert server.centroids().tobytes() == want.tobytes()
    before = parties.in_process_centroids(data, n_clusters=2, seed=5, masking=masking)
    assert want.tobytes() != before.tobytes()
    # A second request: retraining is under the setup resolved at training
    # (the clients' k and the bound follow the totals then).
    parties.client_forget(paths[0], 0, [5])
    parties.run_round(server, list(range(4)), send, commit)
    gone[0] = [5]
    want = parties.in_process_centroids(data, n_clusters=2, seed=5, masking=masking, forgotten=gone)
    assert server.centroids().tobytes() == want.tobytes()


STAGES = ["advertise-keys", "share-keys", "masked-input", "consistency-check", "unmasking"]


@pytest.mark.parametrize("stage", range(5))
def test_a_client_silent_from_any_stage_is_a_dropout_at_that_stage(tmp_path, stage):
    data, paths, regs = make(tmp_path, n=5)
    server = parties.ServerParty(regs, n_clusters=2, seed=3, masking="secagg")
    # Client 4 is silent from `stage` on (0 is its first message).
    send, commit = stateless(paths, silent=lambda c, step: c == 4 and step >= stage)
    report = parties.run_round(server, list(range(5)), send, commit)
    assert report["dropped"] == [(4, STAGES[stage])]
    # A client that sent its masked input is in the sum (threat model D3).
    held = [0, 1, 2, 3, 4] if stage >= 3 else [0, 1, 2, 3]
    assert report["included"] == held
    want = server.in_process_centroids([data[c] for c in held])
    assert server.centroids().tobytes() == want.tobytes()
    # Back for the next round: the model is every client's again.
    send, commit = stateless(paths)
    report = parties.run_round(server, list(range(5)), send, commit)
    assert report["included"] == [0, 1, 2, 3, 4]
    want = parties.in_process_centroids(data, n_clusters=2, seed=3, masking="secagg")
    assert server.centroids().tobytes() == want.tobytes()


@pytest.mark.parametrize("masking", ["secagg", "pairwise"])
def test_a_server_that_asks_a_step_again_otherwise_is_refused(tmp_path, masking):
    data, paths, regs = make(tmp_path)
    server = parties.ServerParty(regs, n_clusters=2, seed=5, masking=masking)
    announcement = server.start_round([0, 1, 2, 3])
    transcripts = {c: [announcement] for c in range(4)}
    for c in range(4):
        server.receive(c, parties.client_step(paths[c], c, transcripts[c]))
    step = server.advance()
    for c, m in step:
        transcripts[c].append(m)
    answer = parties.client_step(paths[0], 0, transcripts[0])
    # Asked again with the same transcript: the same answer (a replay).
    assert parties.client_step(paths[0], 0, transcripts[0]) == answer
    # Asked the same step with another client's message, or a changed
    # one: refused, whatever the strategy.
    # (Pairwise masks' directory is one message for all: no other there.)
    others = [t[-1] for t in transcripts.values() if t[-1] != transcripts[0][-1]]
    for other in others:
        with pytest.raises(MufcError):
            parties.client_step(paths[0], 0, transcripts[0][:-1] + [other])
    assert others or masking == "pairwise"
    flipped = bytearray(transcripts[0][-1])
    flipped[-1] ^= 1
    with pytest.raises(MufcError):
        parties.client_step(paths[0], 0, transcripts[0][:-1] + [bytes(flipped)])


def test_points_forgotten_mid_round_are_never_masked_twice(tmp_path):
    # The server asks for the masked input, the client's points change,
    # the server asks again: the client would answer otherwise under the
    # same masks (the difference is the change), so it refuses.
    data, paths, regs = make(tmp_path)
    server = parties.ServerParty(regs, n_clusters=2, seed=5, masking="pairwise")
    announcement = server.start_round([0, 1, 2, 3])
    transcripts = {c: [announcement] for c in range(4)}
    for c in range(4):
        server.receive(c, parties.client_step(paths[c], c, transcripts[c]))
    for c, m in server.advance():
        transcripts[c].append(m)
    parties.client_step(paths[2], 2, transcripts[2])
    parties.client_forget(paths[2], 2, [1, 2, 3, 4, 5])
    with pytest.raises(ProtocolError, match="answered once"):
        parties.client_step(paths[2], 2, transcripts[2])


def test_bad_input_to_the_parties_raises_clear_errors(tmp_path):
    data, paths, regs = make(tmp_path)
    with pytest.raises(ValueError):
        parties.client_create(os.fspath(tmp_path / "bad.db"), "x", np.array([[np.nan, 0.0]]))
    with pytest.raises(MufcError):
        parties.client_create(paths[0], "again", data[0])
    with pytest.raises(MufcError):
        parties.client_step(paths[0], 0, [])
    with pytest.raises(MufcError):
        parties.client_step(paths[0], 0, [b"not an announcement"])
    with pytest.raises(MufcError):
        parties.client_registration(os.fspath(tmp_path / "missing.db"), 0)
    with pytest.raises(ValueError):
        parties.ServerParty(regs, n_clusters=2, masking="dealer")
    server = parties.ServerParty(regs, n_clusters=2)
    with pytest.raises(ProtocolError, match="no round"):
        server.advance()


def test_a_handler_waits_for_another_on_the_same_store(tmp_path):
    # Two messages of one node at once (a forget beside a commit) must not
    # interleave their load and save: a handler holds the store's lock.
    import fcntl
    import threading

    data, paths, regs = make(tmp_path)
    done = threading.Event()
    with open(paths[1] + ".lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: (parties.client_forget(paths[1], 1, [3]), done.set()))
        worker.start()
        assert not done.wait(0.5), "the forget ran while another handler held the store"
        fcntl.flock(held, fcntl.LOCK_UN)
    worker.join(10)
    assert done.is_set()
