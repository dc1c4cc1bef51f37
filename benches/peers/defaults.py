#!/usr/bin/env python3
"""The defaults of `mufc run` / `mufc fit`, re-checked on more than one data set.

For the built-in Gaussian data (no --data; mufc's defaults, L = 100) and
every CSV that `real_data.py export` wrote (scikit-learn's bundled iris,
wine, breast_cancer and digits, run as real_data.py runs them: --data FILE
--scale --k K --clients 10, K the number of classes), this varies ONE
default at a time, all others at their default, and runs

  BIN run [--data FILE --scale --k K --clients 10] --seed S --trials T
          [OPTION VALUE] --json -q

for each data seed S (default 2023 and 7: the data of the built-in set and
the split of every set; the T trials of a run differ in the federation's
seed only). The options varied, against their defaults:

  --server-restarts  10 (default 1)
  --client-k         min(3, K) when that is below K (K' of the default
                     non-i.i.d. split), else K - 1 (default K)
  --server-points    uniform (default centers)
  --gamma            0.5x, 2x and 0.25x the binary's default (the
                     default run's JSON gamma), the rules 1/sqrt(n) (the
                     paper's, mufc's default before 2026-11-24) and
                     1/sqrt(n d) (mufc's default since), and the fixed
                     0.01; a value equal to the default is left out

It prints two markdown tables:

  1. data set, n, d, K, seed, option, value, gamma, loss ratio (mean and
     std over the T trials), the distinct server points (the JSON's
     server_points_count, after quantization, of at most k L), and per
     trial the server's decode, the server's whole time and the
     federation's wall time, in ms (means over trials, as the JSON's
     *_seconds give them), then the sketch scheme the server decoded and
     the bytes a client sent (of the first trial).
  2. per data set and seed: phi_c* (of the scaled data), the RMS distance
     r = sqrt(phi_c* / n) of a point to its centre, and for gamma =
     1/sqrt(n) and 1/sqrt(n d): gamma / r and n d gamma^2 / 12 / phi_c*,
     the quantization's error (a point moved by up to gamma / 2 along each
     axis, uniformly: gamma^2 / 12 an axis) against phi_c*; and the
     distinct server points of the default run.

With --zscore it also runs the defaults and the two gamma rules on
z-scored copies of the exported sets (each feature centred and divided by
its standard deviation, written next to the CSVs as <name>-z.csv): a
different K-means problem (phi_c* of the z-scored data), only to see how
much of a set's loss ratio comes from one feature dominating the common
scale of --scale.

Run by hand, never in CI. From the workspace root:

  python3 benches/peers/real_data.py export /tmp/mufc-data
  python3 benches/peers/defaults.py --mufc target/release/mufc --zscore

(--trials-builtin, default 5, and --trials-file, default 20: the file sets
run in milliseconds, so more trials there narrow the spread for free;
--seeds 2023,7.)

Needs: Python 3.11, pip install scikit-learn (numpy comes with it). The CSV
files are generated data: never commit them.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_data import DEFAULT_DIR, FILE_CLIENTS, SETS, natural_k, one_run  # noqa: E402


def variants(k, n, d, gamma0):
    """(option, value shown, extra arguments) of every run of a set; the
    first is the defaults."""
    kp = min(3, k)
    small_k = kp if kp < k else k - 1
    out = [("(defaults)", "", [])]
    out.append(("--server-restarts", "10", ["--server-restarts", "10"]))
    if small_k >= 1:
        out.append(("--client-k", str(small_k), ["--client-k", str(small_k)]))
    out.append(("--server-points", "uniform", ["--server-points", "uniform"]))
    gammas = [(f"{f:g}x default", f * gamma0) for f in (0.5, 2.0, 0.25)]
    gammas += [("1/sqrt(n)", 1.0 / math.sqrt(n)), ("1/sqrt(n d)", 1.0 / math.sqrt(n * d)),
               ("0.01", 0.01)]
    for name, g in gammas:
        if abs(g - gamma0) > 1e-9 * gamma0:
            out.append(("--gamma", name, ["--gamma", repr(g)]))
    return out


def ms(s):
    v = 1e3 * s
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def zscore_copy(path):
    x = np.loadtxt(path, delimiter=",", skiprows=1)
    sd = x.std(axis=0)
    sd[sd == 0] = 1.0
    z = (x - x.mean(axis=0)) / sd
    out = path[:-4] + "-z.csv"
    header = ",".join(f"f{i}" for i in range(x.shape[1]))
    np.savetxt(out, z, delimiter=",", header=header, comments="", fmt="%.17g")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mufc", required=True, help="the mufc binary")
    ap.add_argument("--data-dir", default=DEFAULT_DIR)
    ap.add_argument("--seeds", default="2023,7")
    ap.add_argument("--trials-builtin", type=int, default=5)
    ap.add_argument("--trials-file", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a run")
    ap.add_argument("--zscore", action="store_true",
                    help="also run z-scored copies of the file sets")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]

    sets = [("built-in Gaussian", None, 10, None, args.trials_builtin, False)]
    for name in SETS:
        path = os.path.join(args.data_dir, f"{name}.csv")
        if not os.path.exists(path):
            sys.exit(f"{path} missing: run `real_data.py export {args.data_dir}` first")
        sets.append((name, path, natural_k(name), FILE_CLIENTS, args.trials_file, False))
    if args.zscore:
        for name in SETS:
            path = zscore_copy(os.path.join(args.data_dir, f"{name}.csv"))
            sets.append((f"{name} (z-scored)", path, natural_k(name), FILE_CLIENTS,
                         args.trials_file, True))

    rows, diag = [], []
    start = time.perf_counter()
    for label, path, k, clients, trials, zscored in sets:
        for seed in seeds:
            base = [args.mufc, "run"]
            if path is not None:
                base += ["--data", path, "--scale", "--k", str(k), "--clients", str(clients)]
            base += ["--seed", str(seed), "--trials", str(trials)]
            first, _, msg = one_run(base + ["--json", "-q"], args.timeout)
            if msg is not None:
                sys.exit(f"{label} seed {seed}: {msg}")
            n, d, g0, phi = first["n"], first["d"], first["gamma"], first["phi_c_star"]
            rms = math.sqrt(phi / n)
            g1, g2 = 1.0 / math.sqrt(n), 1.0 / math.sqrt(n * d)
            diag.append((label, n, d, k, seed, g0, phi, rms,
                         g1 / rms, n * d * g1 * g1 / 12.0 / phi,
                         g2 / rms, n * d * g2 * g2 / 12.0 / phi,
                         first["server_points_count"], first["local_k"] * first["clients"]))
            vs = variants(k, n, d, g0)
            if zscored:
                vs = [v for v in vs
                      if v[0] == "(defaults)" or v[1] in ("1/sqrt(n)", "1/sqrt(n d)")]
            for opt, val, extra in vs:
                if not extra:
                    out, secs = first, None
                else:
                    out, secs, msg = one_run(base + extra + ["--json", "-q"], args.timeout)
                    if msg is not None:
                        rows.append((label, n, d, k, seed, opt, val, None, msg))
                        continue
                print(f"{label} seed {seed} {opt} {val}: {out['loss_ratio']:.4f} "
                      f"({time.perf_counter() - start:.0f} s so far)", file=sys.stderr)
                rows.append((label, n, d, k, seed, opt, val, out, None))

    print(f"\n{len(rows)} runs in {time.perf_counter() - start:.0f} s\n")
    print("| data set | n | d | K | seed | option | value | gamma | loss ratio (mean ± std) "
          "| server points | decode ms | server ms | wall ms | scheme | bytes per client |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, n, d, k, seed, opt, val, out, msg in rows:
        if out is None:
            print(f"| {label} | {n} | {d} | {k} | {seed} | {opt} | {val} | | {msg} | | | | | | |")
            continue
        print(f"| {label} | {n} | {d} | {k} | {seed} | {opt} | {val} | {out['gamma']:.3g} "
              f"| {out['loss_ratio']:.4f} ± {out['loss_ratio_std']:.4f} "
              f"| {out['server_points_count']} of {out['local_k'] * out['clients']} "
              f"| {ms(out['decode_seconds'])} | {ms(out['server_seconds'])} "
              f"| {ms(out['wall_seconds'])} | {out['sketch_scheme']} "
              f"| {out['bytes_per_client']} |")
    print()
    print("| data set | n | d | K | seed | phi_c* | r = sqrt(phi_c*/n) "
          "| 1/sqrt(n): gamma / r | 1/sqrt(n): n d gamma^2 / 12 / phi_c* "
          "| 1/sqrt(n d): gamma / r | 1/sqrt(n d): n d gamma^2 / 12 / phi_c* "
          "| default gamma | server points (default run) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, n, d, k, seed, g0, phi, rms, r1, e1, r2, e2, sp, kl in diag:
        print(f"| {label} | {n} | {d} | {k} | {seed} | {phi:.4g} | {rms:.3g} "
              f"| {r1:.3g} | {e1:.3g} | {r2:.3g} | {e2:.3g} | {g0:.3g} | {sp} of {kl} |")


if __name__ == "__main__":
    main()
