#!/usr/bin/env python3
"""Two `mufc` binaries serving the same removal requests on copies of one
model store, alternated, in one run: the median wall time of a `mufc
forget` process and the median time of its request (apply + commit, from
`--json`). For checking that a change of the store's code (issue 27: the
store moved to the `mufc-store` crate) costs nothing.

    python3 benches/compare_store.py OLD_BINARY NEW_BINARY

Needs the suite's `sites-noniid.csv` (`python3 benches/peers/suite.py
export /tmp/mufc-suite`). The store is fitted once by OLD (the schema
must be one both read); each binary then serves 6 x 10 requests of two
random rows on a fresh copy, the binaries alternating by block.
"""
import json, subprocess, shutil, statistics, sys, time, os, random
old, new = sys.argv[1], sys.argv[2]
d = "/tmp/sb"; os.makedirs(d, exist_ok=True)
data = "/tmp/mufc-suite/sites-noniid.csv"
base = f"{d}/base.mufc"
for f in os.listdir(d): os.remove(f"{d}/{f}")
subprocess.run([old, "fit", "--data", data, "--client-column", "0", "--scale", "--k", "8", "--model", base, "-q"], check=True)
n = sum(1 for _ in open(data)) - 1
rng = random.Random(7)
res = {"old": [], "new": []}
commit = {"old": [], "new": []}
for trial in range(6):
    for name, binary in ([("old", old), ("new", new)] if trial % 2 == 0 else [("new", new), ("old", old)]):
        m = f"{d}/{name}.mufc"
        shutil.copy(base, m)
        ids = rng.sample(range(n), 20)
        for k in range(10):
            req = f"{ids[2*k]},{ids[2*k+1]}"
            t = time.perf_counter()
            out = subprocess.run([binary, "forget", "--model", m, "--ids", req, "--json", "-q"], capture_output=True, text=True)
            wall = time.perf_counter() - t
            res[name].append(wall)
            try:
                r = json.loads(out.stdout)["requests"][0]
                commit[name].append(r["apply_seconds"] + r["commit_seconds"])
            except Exception as e:
                print("no report:", out.stdout[:200], out.stderr[:200])
        os.remove(m)
for k, v in res.items():
    print(k, "median wall per forget (ms):", round(statistics.median(v) * 1000, 2), "n =", len(v))
print("new/old wall:", round(statistics.median(res["new"]) / statistics.median(res["old"]), 3))
for k, v in commit.items():
    print(k, "median apply+commit (ms):", round(statistics.median(v) * 1000, 3), "n =", len(v))
print("new/old apply+commit:", round(statistics.median(commit["new"]) / statistics.median(commit["old"]), 3))
