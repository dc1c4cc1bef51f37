"""The MUFC parties over bytes, for a federated framework to drive.

The server's party (:class:`ServerParty`) is an object the driver keeps for
the run. Each client's party is a set of stateless handlers over bytes
(``client_create``, ``client_registration``, ``client_step``,
``client_commit``, ``client_forget``) whose state is the client's own store,
a path the caller gives: a framework may start a new client process for
every message (Flower's deployment engine does).

A client rebuilds its half of a round from the round's transcript (the
announcement, then the server's message of each step so far), which the
driver sends with every step: its round secrets derive from a key its
store keeps, with the round's session, so every replay answers alike, and
its store logs each answer, so that a step is answered once (a server
asking again otherwise, or a client whose points changed mid-round, is
refused). :func:`run_round` is the driver's loop; a framework supplies
``send``, which carries a transcript to a client and returns its answer,
or ``None`` when none came by the step's deadline (a dropout at that step).

Example (four clients in one process, SecAgg):

>>> import tempfile, os, numpy as np
>>> from mufc import parties
>>> rng = np.random.default_rng(0)
>>> data = [rng.uniform(-0.4, 0.4, size=(30, 2)) for _ in range(4)]
>>> tmp = tempfile.mkdtemp()
>>> paths = {c: os.path.join(tmp, f"client-{c}.db") for c in range(4)}
>>> for c, x in enumerate(data):
...     parties.client_create(paths[c], f"site-{c}", x)
>>> regs = [parties.client_registration(paths[c], c) for c in range(4)]
>>> server = parties.ServerParty(regs, n_clusters=2, seed=5)
>>> def send(c, transcript):
...     return parties.client_step(paths[c], c, transcript)
>>> def commit(c, transcript, included):
...     parties.client_commit(paths[c], c, transcript, included)
>>> report = parties.run_round(server, [0, 1, 2, 3], send, commit)
>>> report["included"]
[0, 1, 2, 3]
>>> reference = parties.in_process_centroids(data, n_clusters=2, seed=5)
>>> server.centroids().tobytes() == reference.tobytes()
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Optional

if TYPE_CHECKING:
    import numpy as np

import contextlib
import functools
import os

from mufc import _native
from mufc._native import MufcError, ServerParty, client_create, registration

try:
    import fcntl
except ImportError:  # not a POSIX system
    fcntl = None


@contextlib.contextmanager
def _exclusive(path) -> "Iterator[None]":
    """Holds the client's store for one handler: a framework may run two
    messages of one node at once (a forget beside a commit), and each
    handler loads the client's state, changes it and saves it; unlocked,
    the later save would undo the earlier (an erasure lost). An exclusive
    `flock` on `<store>.lock`; on a system without it, none."""
    if fcntl is None:
        yield
        return
    with open(os.fspath(path) + ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _locked(handler):
    @functools.wraps(handler)
    def run(path, *args, **kwargs):
        with _exclusive(path):
            return handler(path, *args, **kwargs)

    return run


client_registration = _locked(_native.client_registration)
client_step = _locked(_native.client_step)
client_commit = _locked(_native.client_commit)
client_forget = _locked(_native.client_forget)

__all__ = [
    "ServerParty",
    "client_create",
    "client_registration",
    "client_step",
    "client_commit",
    "client_forget",
    "in_process_centroids",
    "registration",
    "run_round",
    "run_round_batched",
]

Send = Callable[[int, list], Optional[bytes]]


def in_process_centroids(clients: list, forgotten: list | None = None, **options) -> "np.ndarray":
    """The centroids (``k x d``) the same parties reach driven in one
    process, for clients ``clients[i]`` less their points ``forgotten[i]``
    (named by row), under the setup a :class:`ServerParty` with
    ``options`` resolves from all the records: the model a driver must
    reach, bit for bit, and retraining's after a removal."""
    regs = [registration(c, x) for c, x in enumerate(clients)]
    return ServerParty(regs, **options).in_process_centroids(clients, forgotten)
Commit = Callable[[int, list, bool], None]


def run_round(server: ServerParty, ids: list[int], send: Send, commit: Commit) -> dict:
    """Runs one round of the clients ``ids`` on ``server``, one client at a
    time (:func:`run_round_batched` with a step's messages sent in turn).

    ``send(client, transcript)`` carries the round's transcript so far to a
    client and returns its answer; ``None`` (or a ``MufcError`` raised by
    the client) is a client that did not answer by the step's deadline,
    which the server then leaves out from that step on. Once the server
    finished the round, ``commit(client, transcript, included)`` tells each
    client (a failure there is the client's to catch up on at its next
    round). Returns ``{"included": [...], "dropped": [(client, step)]}``.
    """

    def answer(c: int, transcript: list) -> Optional[bytes]:
        try:
            return send(c, transcript)
        except MufcError:
            return None

    def send_all(transcripts: dict) -> dict:
        return {c: answer(c, t) for c, t in transcripts.items()}

    def commit_all(transcripts: dict, included: set) -> None:
        for c, t in transcripts.items():
            try:
                commit(c, t, c in included)
            except MufcError:
                pass

    return run_round_batched(server, ids, send_all, commit_all)


SendAll = Callable[[dict], dict]
CommitAll = Callable[[dict, set], None]


def run_round_batched(
    server: ServerParty, ids: list[int], send_all: SendAll, commit_all: CommitAll
) -> dict:
    """As :func:`run_round`, with a stage's messages sent at once:
    ``send_all({client: transcript})`` returns ``{client: answer or
    None}`` by the stage's deadline, and ``commit_all({client:
    transcript}, included)`` tells every client of the round that it
    finished (a framework's broadcast with a timeout)."""
    announcement = server.start_round(list(ids))
    transcripts = {c: [announcement] for c in ids}

    def stage(asked: list[int]) -> None:
        answers = send_all({c: transcripts[c] for c in asked})
        for c in asked:
            answer = answers.get(c)
            if answer is not None:
                try:
                    server.receive(c, answer)
                except MufcError:
                    pass

    stage(list(ids))
    while (step := server.advance()) is not None:
        for c, message in step:
            transcripts[c].append(message)
        stage([c for c, _ in step])
    included, dropped = server.finish_round()
    commit_all(transcripts, set(included))
    return {"included": included, "dropped": dropped}
