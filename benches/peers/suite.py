#!/usr/bin/env python3
"""The data suite the defaults of `mufc` are chosen on (issue 26), and the
runs that measure them.

Three subcommands:

  export [DIR]   Writes the suite's data sets as CSV files DIR/<name>.csv
                 (default DIR /tmp/mufc-suite): a header, then one point a
                 row, the first column the client's name (`site-3`), the
                 others the features; and DIR/suite.json, which lists each
                 set with its n, d, K, number of clients and shape. Every
                 set is generated from a fixed seed (numpy's PCG64), or
                 exported from scikit-learn's bundled data (no download):

                   sites-iid       4 sites, n = 20 000, d = 10, K = 10,
                                   well separated, i.i.d. across sites
                   sites-noniid    8 sites, n = 16 000, d = 6, K = 8,
                                   each site 3 of the clusters
                   phones          1 000 clients of 30 to 150 points (n ~
                                   90 000), d = 8, K = 8, two clusters a
                                   client
                   overlap         50 clients, n = 30 000, d = 16, K = 10,
                                   overlapping clusters, non-i.i.d. (K' = 3)
                   imbalanced      20 clients of Zipf-like sizes, n = 50 000,
                                   d = 5, K = 6, cluster sizes 40 % to 2 %
                   high-d          20 clients, n = 20 000, d = 64, K = 12,
                                   i.i.d.
                   low-d           10 clients, n = 10 000, d = 2, K = 5,
                                   non-i.i.d. (K' = 2)
                   iid-many        100 clients, n = 100 000, d = 8, K = 20,
                                   i.i.d. (every client holds every cluster)
                   million         200 clients, n = 1 000 000, d = 4, K = 8,
                                   i.i.d.
                   iris, wine,     scikit-learn's bundled sets, 10 clients
                   breast_cancer,  each holding the points of at most two
                   digits          classes (one class for breast_cancer's
                                   K = 2), K the number of classes

                 and the shapes added after an audit of the defaults (their
                 own generator, so that the sets above stay as they were):

                   <set>-iid3,     scikit-learn's iris, wine, breast_cancer
                   <set>-iid20,    (bc) and digits split i.i.d. over 3 and
                   <set>-noniid5   20 clients, and by class over 5
                   diabetes-iid8   scikit-learn's diabetes, K = 4, 8 clients
                   digits-100      digits over 100 clients, 2 classes each
                   aniso, varied   scikit-learn's anisotropic and
                                   unequal-variance blobs, 6 clients
                   k50             K = 50, d = 20, 40 clients, K' = 5
                   d200            d = 200, K = 5, 10 clients
                   dups            integer grid data (5 values an axis,
                                   d = 6, many duplicates), 16 clients
                   tiny-client     5 clients and one of 2 points
                   500-small       500 clients of 12 points, i.i.d.
                   overlap-iid,    overlapping clusters split i.i.d. (50
                   overlap-d4-iid  clients; d = 16 and d = 4)
                   ovl-iid-200     the same over 200 clients of 150 points
                   overlap-200,    10 clusters, i.i.d. over 200 clients of
                   mid-iid-300     250 points and 300 clients of 200
                   gauss-blob      one elongated Gaussian cut into K = 8
                   uniform,        uniform data (d = 6 and 2): no cluster
                   uniform2d       structure at all

                 and the built-in Gaussian set of `mufc` (no file: `mufc`
                 makes and splits it).

  run --mufc BIN [--dir DIR] [--trials T] [--only a,b] [--variant NAME]...
                 For every set, and every variant (a name and the options
                 it adds; `--variant` picks some, default all of
                 VARIANTS), runs
                   BIN compare --data DIR/<name>.csv --client-column 0
                       --scale --k K --trials T --json -q OPTIONS
                 (the built-in set: BIN compare --trials T --json -q
                 OPTIONS) and prints a markdown table: set, variant, MUFC's
                 loss ratio (mean and std over trials), K-FED's and
                 DC-KMeans', MUFC's margin over the better baseline, bytes
                 per client, MUFC's fit time (the paper's count, mean), and
                 the wall time of the command. Every JSON line is appended
                 to DIR/runs.jsonl as it comes, so a long run can be read
                 while it goes. The million set uses 2 trials whatever T.

  report [--dir DIR]
                 From DIR/runs.jsonl, the table of the defaults against the
                 defaults before issue 26 (variants "defaults" and
                 "before", the last run of each per set): loss ratios,
                 K-FED's and DC-KMeans', bytes per client, fit time and
                 the mean removal round.

Run by hand, never in CI. From the workspace root:

  python3 benches/peers/suite.py export
  python3 benches/peers/suite.py run --mufc target/release/mufc --trials 5
  python3 benches/peers/suite.py report

Needs: Python 3.11, numpy, scikit-learn (pip install scikit-learn). The
CSV files are generated data: never commit them.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

DEFAULT_DIR = "/tmp/mufc-suite"

def gamma(s, factor=1.0):
    """factor / sqrt(n d): the default step, scaled."""
    return repr(factor / math.sqrt(s["n"] * s["d"]))


# The variants measured: a name and the options each adds to `mufc
# compare`, given the set (n, d, K, clients). "defaults" is whatever the
# binary's defaults are; "before" the defaults before issue 26 (seeding
# only, k = K, one server run, bin centres, 1/sqrt(n d), every cluster
# sent); "paper" the paper's experiment.
VARIANTS = {
    "defaults": lambda s: [],
    "before": lambda s: ["--preset", "paper", "--server-points", "centers", "--gamma", gamma(s)],
    "paper": lambda s: ["--preset", "paper"],
    "s2": lambda s: ["--min-cluster-size", "2"],
    "s3": lambda s: ["--min-cluster-size", "3"],
    "m4": lambda s: ["--client-k", "auto:4:1000:30"],
    "T2000": lambda s: ["--client-k", "auto:2:2000:30"],
    "P60": lambda s: ["--client-k", "auto:2:1000:60"],
    "no-double": lambda s: ["--client-k", "auto:2:1000:1000000000"],
    "r1": lambda s: ["--client-restarts", "1"],
    "r3": lambda s: ["--client-restarts", "3"],
    "gamma-nd": lambda s: ["--gamma", gamma(s)],
    "seeding": lambda s: ["--client-training", "seeding"],
}


def mixture(rng, n, d, k, spread, weights=None):
    """n points of k spherical Gaussian clusters in d dimensions: centres
    uniform in [0, 1]^d, each coordinate of standard deviation `spread`;
    cluster sizes by `weights` (default equal). Returns points and labels."""
    centres = rng.uniform(0.0, 1.0, size=(k, d))
    w = np.ones(k) / k if weights is None else np.asarray(weights) / np.sum(weights)
    labels = rng.choice(k, size=n, p=w)
    points = centres[labels] + rng.normal(0.0, spread, size=(n, d))
    return points, labels


def iid(rng, n, clients, sizes=None):
    """A client for each point, every client an even (or `sizes`) share of
    a random order."""
    order = rng.permutation(n)
    if sizes is None:
        sizes = np.full(clients, n // clients)
        sizes[: n - sizes.sum()] += 1
    owner = np.empty(n, dtype=int)
    at = 0
    for c, s in enumerate(sizes):
        owner[order[at : at + s]] = c
        at += s
    return owner


def non_iid(rng, labels, clients, k_prime):
    """Each client takes points of at most `k_prime` clusters: every
    cluster's points are dealt among the clients that took it."""
    k = labels.max() + 1
    owner = np.empty(len(labels), dtype=int)
    takers = [[] for _ in range(k)]
    for c in range(clients):
        for j in rng.choice(k, size=min(k_prime, k), replace=False):
            takers[j].append(c)
    for j in range(k):
        if not takers[j]:
            takers[j].append(int(rng.integers(clients)))
        idx = np.flatnonzero(labels == j)
        rng.shuffle(idx)
        for i, part in enumerate(np.array_split(idx, len(takers[j]))):
            owner[part] = takers[j][i]
    return owner


def write(path, points, owner):
    d = points.shape[1]
    with open(path, "w") as f:
        f.write("client," + ",".join(f"f{i}" for i in range(d)) + "\n")
        for c, p in zip(owner, points):
            f.write(f"site-{c}," + ",".join(repr(float(x)) for x in p) + "\n")


def export(directory):
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(2026_11_27)
    sets = []

    def add(name, points, owner, k, shape):
        write(os.path.join(directory, f"{name}.csv"), points, owner)
        n, d = points.shape
        clients = len(set(owner.tolist()))
        sets.append(dict(name=name, n=n, d=d, k=k, clients=clients, shape=shape))
        print(f"{name}: n = {n}, d = {d}, K = {k}, {clients} clients ({shape})")

    p, y = mixture(rng, 20_000, 10, 10, 0.03)
    add("sites-iid", p, iid(rng, len(y), 4), 10, "4 sites, i.i.d., well separated")
    p, y = mixture(rng, 16_000, 6, 8, 0.04)
    add("sites-noniid", p, non_iid(rng, y, 8, 3), 8, "8 sites, K' = 3")
    sizes = rng.integers(30, 151, size=1000)
    p, y = mixture(rng, int(sizes.sum()), 8, 8, 0.05)
    order = np.argsort(y, kind="stable")
    owner = np.empty(len(y), dtype=int)
    # Two clusters a phone: clients in a ring over the sorted labels.
    at = 0
    for c, s in enumerate(rng.permutation(sizes)):
        owner[order[at : at + s]] = c
        at += s
    add("phones", p, owner, 8, "1000 small clients, about 2 clusters each")
    p, y = mixture(rng, 30_000, 16, 10, 0.25)
    add("overlap", p, non_iid(rng, y, 50, 3), 10, "50 clients, overlapping, K' = 3")
    zipf = 1.0 / np.arange(1, 21)
    sizes = np.maximum(50, np.round(50_000 * zipf / zipf.sum())).astype(int)
    weights = [0.40, 0.25, 0.15, 0.10, 0.08, 0.02]
    p, y = mixture(rng, int(sizes.sum()), 5, 6, 0.04, weights)
    add("imbalanced", p, iid(rng, len(y), 20, sizes), 6, "20 clients of Zipf sizes, clusters 40 % to 2 %")
    p, y = mixture(rng, 20_000, 64, 12, 0.05)
    add("high-d", p, iid(rng, len(y), 20), 12, "20 clients, d = 64, i.i.d.")
    p, y = mixture(rng, 10_000, 2, 5, 0.03)
    add("low-d", p, non_iid(rng, y, 10, 2), 5, "10 clients, d = 2, K' = 2")
    # Its own generator, so that adding it left the other sets as they were.
    r2 = np.random.default_rng(2026_11_28)
    p, y = mixture(r2, 100_000, 8, 20, 0.03)
    add("iid-many", p, iid(r2, len(y), 100), 20, "100 clients, K = 20, i.i.d.")
    p, y = mixture(rng, 1_000_000, 4, 8, 0.03)
    add("million", p, iid(rng, len(y), 200), 8, "200 clients, n = 10^6, i.i.d.")

    from sklearn import datasets  # noqa: PLC0415

    for name, loader in [
        ("iris", datasets.load_iris),
        ("wine", datasets.load_wine),
        ("breast_cancer", datasets.load_breast_cancer),
        ("digits", datasets.load_digits),
    ]:
        b = loader()
        x, y = b.data.astype(float), b.target
        k = int(y.max()) + 1
        add(name, x, non_iid(rng, y, 10, 1 if k == 2 else 2), k, "scikit-learn, 10 clients, by class")
    more(add)
    with open(os.path.join(directory, "suite.json"), "w") as f:
        json.dump(sets, f, indent=1)


def more(add):
    """The shapes added after the audit of the defaults (issue 26): their
    own generator, so that the sets before them stay as they were."""
    from sklearn import datasets  # noqa: PLC0415

    rng = np.random.default_rng(99)
    for name, loader in [
        ("iris", datasets.load_iris),
        ("wine", datasets.load_wine),
        ("bc", datasets.load_breast_cancer),
        ("digits", datasets.load_digits),
    ]:
        b = loader()
        x, y = b.data.astype(float), b.target
        k = int(y.max()) + 1
        add(f"{name}-iid3", x, iid(rng, len(y), 3), k, "scikit-learn, 3 clients, i.i.d.")
        add(f"{name}-iid20", x, iid(rng, len(y), 20), k, "scikit-learn, 20 clients, i.i.d.")
        add(f"{name}-noniid5", x, non_iid(rng, y, 5, 1), k, "scikit-learn, 5 clients, by class")
    b = datasets.load_diabetes()
    add("diabetes-iid8", b.data, iid(rng, len(b.data), 8), 4, "scikit-learn's diabetes, 8 clients")
    b = datasets.load_digits()
    add("digits-100", b.data.astype(float), non_iid(rng, b.target, 100, 2), 10, "digits, 100 clients")
    x, y = datasets.make_blobs(n_samples=3000, random_state=170)
    x = x @ np.array([[0.6, -0.6], [-0.4, 0.8]])
    add("aniso", x, non_iid(rng, y, 6, 2), 3, "anisotropic blobs, 6 clients")
    x, y = datasets.make_blobs(n_samples=3000, cluster_std=[1.0, 2.5, 0.5], random_state=170)
    add("varied", x, iid(rng, len(y), 6), 3, "blobs of unequal variance, 6 clients")
    p, y = mixture(rng, 20000, 20, 50, 0.02)
    add("k50", p, non_iid(rng, y, 40, 5), 50, "K = 50, 40 clients, K' = 5")
    p, y = mixture(rng, 5000, 200, 5, 0.05)
    add("d200", p, iid(rng, len(y), 10), 5, "d = 200, 10 clients")
    p = rng.integers(0, 5, size=(8000, 6)).astype(float)
    add("dups", p, iid(rng, 8000, 16), 6, "integer grid data, 16 clients")
    p, y = mixture(rng, 10000, 5, 4, 0.05)
    o = iid(rng, len(y), 5)
    o[:2] = 5
    add("tiny-client", p, o, 4, "5 clients and one of 2 points")
    p, y = mixture(rng, 6000, 3, 10, 0.04)
    add("500-small", p, iid(rng, len(y), 500), 10, "500 clients of 12 points")
    r2 = np.random.default_rng(7)
    p, y = mixture(r2, 30000, 16, 10, 0.25)
    add("overlap-iid", p, iid(r2, len(y), 50), 10, "overlapping, 50 clients, i.i.d.")
    p, y = mixture(r2, 30000, 4, 10, 0.2)
    add("overlap-d4-iid", p, iid(r2, len(y), 50), 10, "overlapping, d = 4, 50 clients, i.i.d.")
    a = r2.normal(size=(8, 8))
    add("gauss-blob", r2.normal(size=(20000, 8)) @ a, iid(r2, 20000, 20), 8, "one Gaussian, K = 8")
    add("uniform", r2.uniform(size=(8000, 6)), iid(r2, 8000, 16), 6, "uniform, d = 6")
    add("uniform2d", r2.uniform(size=(3000, 2)), iid(r2, 3000, 10), 5, "uniform, d = 2")
    p, y = mixture(r2, 50000, 10, 10, 0.1)
    add("overlap-200", p, iid(r2, len(y), 200), 10, "10 clusters, 200 clients of 250, i.i.d.")
    r3 = np.random.default_rng(11)
    p, y = mixture(r3, 30000, 16, 10, 0.25)
    add("ovl-iid-200", p, iid(r3, len(y), 200), 10, "overlapping, 200 clients of 150, i.i.d.")
    p, y = mixture(r3, 60000, 8, 10, 0.08)
    add("mid-iid-300", p, iid(r3, len(y), 300), 10, "10 clusters, 300 clients of 200, i.i.d.")


def compare(mufc, args, log, tags):
    start = time.perf_counter()
    out = subprocess.run([mufc, "compare", *args, "--json", "-q"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        return None, wall, out.stderr.strip().splitlines()[-1] if out.stderr else "failed"
    j = json.loads(out.stdout)
    j["wall_seconds"] = wall
    j["args"] = args
    j.update(tags)
    log.write(json.dumps(j) + "\n")
    log.flush()
    return j, wall, None


def run(opts):
    with open(os.path.join(opts.dir, "suite.json")) as f:
        sets = json.load(f)
    sets = [dict(name="builtin", n=30000, d=10, k=10, clients=100, shape="mufc's own")] + sets
    if opts.only:
        keep = opts.only.split(",")
        sets = [s for s in sets if s["name"] in keep]
    variants = {v: VARIANTS[v] for v in (opts.variant or VARIANTS)}
    print("| set | variant | MUFC | K-FED | DC-KMeans | MUFC - best | bytes/client | fit ms | removal ms | wall s |")
    print("|---|---|---|---|---|---:|---:|---:|---:|---:|")
    with open(os.path.join(opts.dir, "runs.jsonl"), "a") as log:
        for s in sets:
            trials = 2 if s["name"] == "million" else opts.trials
            base = ["--trials", str(trials)]
            if s["name"] != "builtin":
                base += ["--data", os.path.join(opts.dir, s["name"] + ".csv"), "--client-column", "0", "--scale", "--k", str(s["k"])]
            for v, extra in variants.items():
                j, wall, err = compare(opts.mufc, base + extra(s), log, {"set": s["name"], "variant": v})
                if j is None:
                    print(f"| {s['name']} | {v} | {err} | | | | | | | {wall:.1f} |")
                    sys.stdout.flush()
                    continue
                m, kf, dc = j["mufc"], j["k_fed"], j["dc_kmeans"]
                best = min(kf["loss_ratio"], dc["loss_ratio"])
                rr = m.get("removal_round_seconds")
                print(
                    f"| {s['name']} | {v} k={j.get('client_k', '')} | {m['loss_ratio']:.3f} ± {m['loss_ratio_std']:.3f} "
                    f"| {kf['loss_ratio']:.3f} ± {kf['loss_ratio_std']:.3f} "
                    f"| {dc['loss_ratio']:.3f} ± {dc['loss_ratio_std']:.3f} "
                    f"| {m['loss_ratio'] - best:+.3f} | {m.get('bytes_per_client') or 0:.0f} "
                    f"| {1e3 * m['seconds']:.1f} | {1e3 * (rr or 0):.2f} | {wall:.1f} |"
                )
                sys.stdout.flush()


def report(opts):
    """The before/after table from DIR/runs.jsonl: per set, the last run
    of the variants "defaults" and "before"."""
    last = {}
    with open(os.path.join(opts.dir, "runs.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "set" in j:
                last[(j["set"], j["variant"])] = j
    names = []
    for (name, _) in last:
        if name not in names:
            names.append(name)
    print("| set | MUFC after | MUFC before | K-FED | DC-KMeans | after - best | bytes/client after (before) | fit ms after (before) | removal round ms after (before) |")
    print("|---|---|---|---|---|---:|---:|---:|---:|")
    for name in names:
        a, b = last.get((name, "defaults")), last.get((name, "before"))
        if a is None or b is None:
            continue
        m, o = a["mufc"], b["mufc"]
        kf, dc = a["k_fed"], a["dc_kmeans"]
        best = min(kf["loss_ratio"], dc["loss_ratio"])
        ms = lambda x: 1e3 * (x or 0)
        print(
            f"| {name} | {m['loss_ratio']:.3f} ± {m['loss_ratio_std']:.3f} | {o['loss_ratio']:.3f} ± {o['loss_ratio_std']:.3f} "
            f"| {kf['loss_ratio']:.3f} ± {kf['loss_ratio_std']:.3f} | {dc['loss_ratio']:.3f} ± {dc['loss_ratio_std']:.3f} "
            f"| {m['loss_ratio'] - best:+.3f} | {m['bytes_per_client']:.0f} ({o['bytes_per_client']:.0f}) "
            f"| {ms(m['seconds']):.1f} ({ms(o['seconds']):.1f}) "
            f"| {ms(m.get('removal_round_seconds')):.2f} ({ms(o.get('removal_round_seconds')):.2f}) |"
        )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("dir", nargs="?", default=DEFAULT_DIR)
    r = sub.add_parser("run")
    r.add_argument("--mufc", required=True)
    r.add_argument("--dir", default=DEFAULT_DIR)
    r.add_argument("--trials", type=int, default=5)
    r.add_argument("--only")
    r.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    t = sub.add_parser("report")
    t.add_argument("--dir", default=DEFAULT_DIR)
    opts = p.parse_args()
    if opts.cmd == "export":
        export(opts.dir)
    elif opts.cmd == "report":
        report(opts)
    else:
        run(opts)


if __name__ == "__main__":
    main()
