#!/usr/bin/env bash
# MUFC on Flower's deployment engine, on loopback: one SuperLink and three
# SuperNodes, TLS (a CA of its own, made here) and SuperNode authentication
# (each node's ECDSA key registered with the SuperLink), driven by
# `flwr run examples/flower`. Prints each round's wall time (training and
# two rounds of forget requests), checks the models against the parties in
# one process bit for bit, and times the same rounds driven without Flower.
#
# Run by hand, never in CI:  benches/peers/flower_deployment.sh [python]
# Needs: the mufc wheel and flwr[simulation]==1.42.0 in the environment of
# `python` (default python3), openssl and ssh-keygen. Binds 127.0.0.1 only
# (ports 8000 and 9100-9102); stops every process it started.
set -euo pipefail
py=${1:-python3}
bin=$(dirname "$(command -v "$py")")
export PATH="$bin:$PATH"
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
export FLWR_HOME="$work/home"
pids=()
cleanup() {
    # Every process started here names a file of $work on its command line.
    pkill -f "$work" 2>/dev/null || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    sleep 2
    pkill -9 -f "$work" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# TLS: a CA, and the SuperLink's certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout ca.key -out ca.crt -days 2 -subj "/CN=mufc-bench-ca" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
printf "subjectAltName=IP:127.0.0.1\n" > san.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
    -out server.pem -days 2 -extfile san.ext 2>/dev/null
# SuperNode authentication: one ECDSA P-384 key per node.
for n in 0 1 2; do ssh-keygen -q -t ecdsa -b 384 -N "" -f "node$n" -C ""; done
mkdir -p "$FLWR_HOME"
cat > "$FLWR_HOME/config.toml" <<TOML
[superlink]
default = "deploy"

[superlink.deploy]
address = "127.0.0.1:8000"
root-certificates = "$work/ca.crt"
TOML

flower-superlink --ssl-ca-certfile "$work/ca.crt" --ssl-certfile "$work/server.pem" \
    --ssl-keyfile "$work/server.key" \
    --enable-supernode-auth --isolation subprocess --database "$work/state.db" > superlink.log 2>&1 &
pids+=($!)
for _ in $(seq 60); do grep -q "Application startup complete" superlink.log && break; sleep 0.5; done
for n in 0 1 2; do flwr supernode register "node$n.pub" deploy > /dev/null; done
"$py" "$root/examples/flower/make_data.py" "$work/data" > /dev/null
for n in 0 1 2; do
    flower-supernode --root-certificates "$work/ca.crt" --superlink 127.0.0.1:8000 \
        --auth-supernode-private-key "$work/node$n" --auth-supernode-public-key "$work/node$n.pub" \
        --node-config "partition-id=$n num-partitions=3" --port $((9100 + n)) > "node$n.log" 2>&1 &
    pids+=($!)
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
flwr run "$root/examples/flower" deploy --stream --run-config \
    "data-dir='$work/data' store-dir='$work/stores' out='$work/model.npy' min-nodes=3" 2>&1 \
    | grep "mufc round"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The same rounds without Flower, and the models checked.
"$py" - "$work" <<'PY'
import json, os, sys, tempfile, time
import numpy as np
from mufc import parties
work = sys.argv[1]
data = [np.load(f"{work}/data/client-{c}.npy") for c in range(3)]
opts = dict(n_clusters=3, seed=7, masking="secagg")
forget = [{}, {"1": [3, 7], "2": [0]}, {"0": [5]}]
gone = [[], [], []]
tmp = tempfile.mkdtemp()
paths = {c: os.path.join(tmp, f"c{c}.db") for c in range(3)}
for c, x in enumerate(data):
    parties.client_create(paths[c], f"s{c}", x)
server = parties.ServerParty([parties.client_registration(paths[c], c) for c in range(3)], **opts)
send = lambda ts: {c: parties.client_step(paths[c], c, t) for c, t in ts.items()}
commit = lambda ts, inc: [parties.client_commit(paths[c], c, t, c in inc) for c, t in ts.items()]
for r, request in enumerate(forget):
    start = time.perf_counter()
    for c, pts in request.items():
        parties.client_forget(paths[int(c)], int(c), pts)
        gone[int(c)] += pts
    parties.run_round_batched(server, [0, 1, 2], send, commit)
    ours = time.perf_counter() - start
    flower = json.load(open(f"{work}/model.npy.json"))["rounds"][r]["seconds"]
    same = np.load(f"{work}/model.npy.{r}.npy").tobytes() == parties.in_process_centroids(data, gone, **opts).tobytes()
    print(f"round {r}: on Flower {flower:.3f} s, ours {ours:.3f} s, Flower's engine {flower - ours:.3f} s; model exact: {same}")
PY
