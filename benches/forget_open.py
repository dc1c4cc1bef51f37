#!/usr/bin/env python3
"""Two `mufc` binaries on the built-in data (30 000 points, 100 clients),
alternated by block in one run: the median wall time of whole processes
that open a model store, alone (`export`) and serving one removal request
(`forget`). Each binary fits its own stores (their schemas may differ):

    python3 benches/forget_open.py OLD_BINARY NEW_BINARY [BLOCKS]

Cases, each on fresh random data rows (seeds among them):
  export   mufc export --model M --format json           (open, print)
  one      mufc forget --model M --ids ROW -q             (default policy: erased, update deferred)
  one-p1   mufc forget --model M1 --ids ROW -q            (store fitted with --min-updating-clients 1: applied)
  two      mufc forget --model M --ids ROW,ROW -q         (two records, most often two clients: applied)
"""
import os, random, statistics, subprocess, sys, time

old, new = sys.argv[1], sys.argv[2]
blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 6
d = "/tmp/forget-open"
os.makedirs(d, exist_ok=True)
for f in os.listdir(d):
    os.remove(f"{d}/{f}")
bins = {"old": old, "new": new}
for name, b in bins.items():
    subprocess.run([b, "fit", "--model", f"{d}/{name}.mufc", "-q"], check=True)
    subprocess.run([b, "fit", "--model", f"{d}/{name}-p1.mufc", "-q", "--min-updating-clients", "1"], check=True)
rng = random.Random(11)
rows = rng.sample(range(30000), 30000)
res = {(n, c): [] for n in bins for c in ("export", "one", "one-p1", "two")}
fails = 0

def timed(key, args):
    global fails
    t = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True)
    res[key].append(time.perf_counter() - t)
    if out.returncode not in (0, 3):  # 3: deferred (docs/store.md)
        fails += 1
        print("exit", out.returncode, " ".join(args[1:]), out.stderr[:200], file=sys.stderr)

for block in range(blocks):
    order = ["old", "new"] if block % 2 == 0 else ["new", "old"]
    for name in order:
        b = bins[name]
        m, m1 = f"{d}/{name}.mufc", f"{d}/{name}-p1.mufc"
        for _ in range(5):
            timed((name, "export"), [b, "export", "--model", m, "--format", "json"])
            timed((name, "one"), [b, "forget", "--model", m, "--ids", str(rows.pop()), "-q"])
            timed((name, "one-p1"), [b, "forget", "--model", m1, "--ids", str(rows.pop()), "-q"])
            timed((name, "two"), [b, "forget", "--model", m, "--ids", f"{rows.pop()},{rows.pop()}", "-q"])

print(f"{blocks} blocks of 5 processes per case and binary; failures: {fails}")
print(f"{'case':8} {'old median':>11} {'new median':>11} {'new/old':>8}")
for c in ("export", "one", "one-p1", "two"):
    o = statistics.median(res[("old", c)]) * 1000
    n = statistics.median(res[("new", c)]) * 1000
    print(f"{c:8} {o:9.1f}ms {n:9.1f}ms {n / o:8.3f}")
