"""MUFC on Flower: a ServerApp and a ClientApp on the Message API that train
federated K-means with exact unlearning and serve forget requests, with
MUFC's own masking (SecAgg or pairwise masks), driving the parties of
:mod:`mufc.parties`.

Needs ``flwr`` (``pip install "flwr[simulation]"``). The apps are built by
:func:`server_app` and :func:`client_app` from a settings dict, or, as the
module-level ``serverapp`` and ``clientapp`` that ``flwr run`` loads, from
the run configuration (``[tool.flwr.app.config]``, see
``examples/flower/pyproject.toml``). Settings:

``data-dir``
    Where client ``p`` (the node's ``partition-id``) finds its records,
    ``client-<p>.npy`` (``n x d``, in the quantizer's box ``[-1/2, 1/2]^d``),
    and, if there, their ids ``client-<p>.ids.npy`` (their rows in the
    file ``mufc fit`` would read; ``0..n`` otherwise).
``fit-options``
    The server set up as ``mufc fit <fit-options>`` trains (``--k 3 --seed
    7 --masking secagg``): with the ids above, the model is ``mufc fit``'s on
    the same records, bit for bit. Without it, the options below.
``store-dir``
    Where each client keeps its store, one file per federation and
    partition (the client's own state: its records after forgetting, its
    seeding, its round key).
``federation``
    The federation's name, which keys the stores.
``n-clusters``, ``seed``, ``masking`` (``secagg`` or ``pairwise``),
``client-k``, ``gamma``, ``min-clients``, ``min-updating-clients``
    The federation's options (those of ``mufc server``).
``forget``
    Forget requests, as JSON: a list, each ``{"<client>": [point ids]}``; a
    round runs after each, unless the requests waiting name fewer clients
    than ``min-updating-clients`` (2; the lone-update policy: such a round
    would tell the server those clients' change), which then wait for the
    next.
``min-nodes``
    How many nodes the server waits for before it registers them (2).
``stage-timeout``
    Seconds a stage waits for the clients' replies; a client that did not
    reply (or replied with an error) is a dropout at that stage.
``silent-from``
    For tests of dropouts, as JSON: ``{"<client>": stage}`` makes the client
    fail every stage from that one on (0 is the announcement).
``out``
    Where the server writes the model's centroids after every round
    (``.npy``; ``<out>`` is the last, ``<out>.<round>.npy`` each), and
    ``<out>.json``, each round's clients and wall time (its forget
    requests included).

No secret goes into Flower's records: a message carries the round's public
transcript, a client's reply its protocol message.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from typing import Any

import numpy as np
from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp

from mufc import MufcError, parties

#: The message type of every MUFC message (a query: nothing is trained by
#: Flower's own strategies).
MESSAGE_TYPE = "query.mufc"

_OPTIONS = ("client-k", "gamma", "min-clients", "min-updating-clients")


def _settings(extra: dict[str, Any] | None, context: Context) -> dict[str, Any]:
    merged = dict(context.run_config)
    merged.update(extra or {})
    return merged


def _store(settings: dict[str, Any], partition: int) -> str:
    base = os.fspath(settings["store-dir"])
    os.makedirs(base, exist_ok=True)
    return os.path.join(base, f"{settings.get('federation', 'mufc')}-{partition}.db")


def _handle(settings: dict[str, Any], msg: Message, context: Context) -> Message:
    """One MUFC message to a client: its operation, run on its store."""
    cfg = msg.content["mufc"]
    op = cfg["op"]
    partition = int(context.node_config["partition-id"])
    path = _store(settings, partition)
    reply: dict[str, Any] = {"client": partition}
    silent_from = json.loads(settings.get("silent-from", "{}")).get(str(partition))
    if op == "step" and silent_from is not None and len(cfg["transcript"]) - 1 >= int(silent_from):
        # The fault a test asks for: this client fails from that stage on.
        reply["error"] = "silent (the silent-from setting)"
        return Message(RecordDict({"mufc": ConfigRecord(reply)}), reply_to=msg)
    try:
        if op == "register":
            if not os.path.exists(path):
                data_dir = os.fspath(settings["data-dir"])
                points = np.load(os.path.join(data_dir, f"client-{partition}.npy"))
                ids_file = os.path.join(data_dir, f"client-{partition}.ids.npy")
                ids = [int(i) for i in np.load(ids_file)] if os.path.exists(ids_file) else None
                parties.client_create(path, f"partition-{partition}", points, ids)
            reply["registration"] = [int(v) for v in parties.client_registration(path, partition)]
        elif op == "step":
            answer = parties.client_step(path, partition, list(cfg["transcript"]))
            reply["answer"] = answer if answer is not None else b""
            reply["has-answer"] = answer is not None
        elif op == "commit":
            parties.client_commit(path, partition, list(cfg["transcript"]), bool(cfg["included"]))
        elif op == "forget":
            reply["reseeded"] = parties.client_forget(path, partition, [int(i) for i in cfg["ids"]])
        else:
            reply["error"] = f"unknown operation {op!r}"
    except MufcError as e:
        reply["error"] = f"{type(e).__name__}: {e}"
    return Message(RecordDict({"mufc": ConfigRecord(reply)}), reply_to=msg)


def client_app(settings: dict[str, Any] | None = None) -> ClientApp:
    """The ClientApp: every node a MUFC client whose state is its store."""
    app = ClientApp()

    @app.query("mufc")
    def query(msg: Message, context: Context) -> Message:
        return _handle(_settings(settings, context), msg, context)

    return app


class _Nodes:
    """The server's view of the nodes: who is which client, and one call
    that sends a stage's messages and collects the replies by its
    timeout."""

    def __init__(self, grid: Grid, timeout: float) -> None:
        self.grid = grid
        self.timeout = timeout
        self.node_of: dict[int, int] = {}

    def ask(self, requests: dict[int, dict[str, Any]], by_node: bool = False) -> dict[int, dict]:
        messages = []
        for target, content in requests.items():
            node = target if by_node else self.node_of[target]
            messages.append(
                Message(
                    RecordDict({"mufc": ConfigRecord(content)}),
                    dst_node_id=node,
                    message_type=MESSAGE_TYPE,
                )
            )
        replies = self.grid.send_and_receive(messages, timeout=self.timeout)
        out: dict[int, dict] = {}
        for reply in replies:
            # A failed reply is the client's dropout at this stage; the
            # operator reads why on the server's output.
            if reply.has_error():
                print(f"mufc: node {reply.metadata.src_node_id}: {reply.error.reason}", file=sys.stderr)
                continue
            content = dict(reply.content["mufc"])
            if "error" in content:
                print(f"mufc: client {content['client']}: {content['error']}", file=sys.stderr)
                continue
            key = reply.metadata.src_node_id if by_node else int(content["client"])
            out[key] = content
        return out


def _run_round(server: parties.ServerParty, nodes: _Nodes, ids: list[int]) -> dict:
    """One round over Flower: each stage's messages at once, a missing
    reply a dropout at that stage."""

    def send_all(transcripts: dict[int, list[bytes]]) -> dict[int, bytes | None]:
        replies = nodes.ask({c: {"op": "step", "transcript": t} for c, t in transcripts.items()})
        return {
            c: (replies[c]["answer"] if c in replies and replies[c]["has-answer"] else None)
            for c in transcripts
        }

    def commit_all(transcripts: dict[int, list[bytes]], included: set[int]) -> None:
        nodes.ask(
            {
                c: {"op": "commit", "transcript": t, "included": c in included}
                for c, t in transcripts.items()
            }
        )

    return parties.run_round_batched(server, ids, send_all, commit_all)


def _wait_for_nodes(grid: Grid, least: int, timeout: float) -> list[int]:
    """The nodes of the run, once at least `least` connected (nodes
    connect as they start)."""
    deadline = time.monotonic() + timeout
    while True:
        ids = sorted(grid.get_node_ids())
        if len(ids) >= least:
            return ids
        if time.monotonic() > deadline:
            raise MufcError(f"{len(ids)} nodes connected within {timeout} s, fewer than {least}")
        time.sleep(0.2)


def _main(settings: dict[str, Any], grid: Grid) -> None:
    timeout = float(settings.get("stage-timeout", 60.0))
    nodes = _Nodes(grid, timeout)
    node_ids = _wait_for_nodes(grid, int(settings.get("min-nodes", 2)), timeout)
    registered = nodes.ask({n: {"op": "register"} for n in node_ids}, by_node=True)
    regs = []
    for node, content in sorted(registered.items()):
        cid, points, dim, scale = content["registration"]
        nodes.node_of[int(cid)] = node
        regs.append((int(cid), int(points), int(dim), int(scale)))
    if "fit-options" in settings:
        server = parties.ServerParty.like_fit(regs, shlex.split(str(settings["fit-options"])))
    else:
        options = {k.replace("-", "_"): settings[k] for k in _OPTIONS if k in settings}
        server = parties.ServerParty(
            regs,
            n_clusters=int(settings.get("n-clusters", 10)),
            seed=int(settings.get("seed", 0)),
            masking=str(settings.get("masking", "secagg")),
            **options,
        )
    ids = sorted(nodes.node_of)
    out = settings.get("out")
    rounds = [{}] + json.loads(settings.get("forget", "[]"))
    # The lone-update policy (docs/threat-model.md U3): a round that
    # changes fewer clients' messages than this tells the server their
    # change; such requests wait for others'.
    least = int(settings.get("min-updating-clients", 2))
    waiting: dict[str, list[int]] = {}
    timings = []
    for number, request in enumerate(rounds):
        start = time.perf_counter()
        for c, pts in request.items():
            waiting.setdefault(str(c), []).extend(int(i) for i in pts)
        if number > 0 and len(waiting) < least:
            print(f"mufc request {number}: waits for requests of other clients ({sorted(waiting)})")
            continue
        if waiting:
            nodes.ask({int(c): {"op": "forget", "ids": pts} for c, pts in waiting.items()})
            waiting = {}
        report = _run_round(server, nodes, ids)
        seconds = time.perf_counter() - start
        centroids = server.centroids()
        timings.append({"round": number, "seconds": seconds, **report})
        if out:
            np.save(f"{out}.{number}.npy", centroids)
            np.save(os.fspath(out), centroids)
            with open(f"{out}.json", "w") as f:
                json.dump({"rounds": timings}, f)
        print(
            f"mufc round {number}: included {report['included']}, dropped {report['dropped']}, "
            f"{seconds:.3f} s"
        )


def server_app(settings: dict[str, Any] | None = None) -> ServerApp:
    """The ServerApp: registers the nodes, trains, then serves each round
    of forget requests with a round."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        _main(_settings(settings, context), grid)

    return app


#: The apps ``flwr run`` loads (settings from the run configuration).
serverapp = server_app()
clientapp = client_app()
