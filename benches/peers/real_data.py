#!/usr/bin/env python3
"""The sketch schemes of `mufc run` on the built-in data and on real data.

Two subcommands:

  export [DIR]   Writes scikit-learn's bundled classification data sets,
                 the ones `sklearn.datasets.load_*` reads from the package
                 itself with no download (iris, wine, breast_cancer,
                 digits), as CSV files DIR/<name>.csv (default DIR
                 /tmp/mufc-data): a header row f0,f1,..., then one point a
                 row, features only (no label column). Prints n, d and the
                 natural K (the number of classes) of each. The other
                 bundled sets (diabetes, linnerud) are regression targets
                 with no natural K and are left out.

  run --mufc BIN [--data-dir DIR] [--repeat N] [--timeout S]
                 For the built-in Gaussian data (no --data) and every CSV
                 that `export` wrote, runs
                   BIN run [--data FILE --scale --k K --clients L]
                           --privacy P --json -q
                 for every --privacy that is a sketch scheme (scma,
                 scma-field, scma-integer, scma-wide), N times (default 5),
                 and prints a markdown table: data set, n, d, K, L, log2 of
                 B^d, the --privacy asked, the scheme the server decoded
                 (the JSON's sketch_scheme, sketch_capacity, sketch_elements
                 and modulus_bits), the median (min - max) server decode
                 time, the loss ratio and the bytes per client. A scheme
                 `mufc` refuses is run once and its message recorded in the
                 table; a run longer than --timeout seconds (default 60) is
                 killed, recorded as such, and the scheme's remaining
                 repeats on that set are skipped.

                 L: the built-in data keeps mufc's default (L = 100, 300
                 points a client); the exported sets, 150 to 1797 points,
                 use L = 10, so that even iris (n = 150) gives every client
                 about 15 points, five times its K = 3. Every run uses
                 mufc's default seed, so the repeats differ only in time.

                 `mufc` does not report B^d; the column is derived from the
                 JSON's gamma and d as d * log2(ceil(1 / gamma)), the
                 unshifted grid of `seeding::quantizer::Grid`.

Run by hand, never in CI. From the workspace root:

  python3 benches/peers/real_data.py export /tmp/mufc-data
  python3 benches/peers/real_data.py run --mufc target/release/mufc --repeat 5

Needs: Python 3.11, pip install scikit-learn (numpy comes with it). The CSV
files are generated data: never commit them.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from sklearn import datasets

# name -> loader; all four ship inside the scikit-learn package.
SETS = {
    "iris": datasets.load_iris,
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
    "digits": datasets.load_digits,
}
SCHEMES = ["scma", "scma-field", "scma-integer", "scma-wide"]
FILE_CLIENTS = 10
DEFAULT_DIR = "/tmp/mufc-data"


def natural_k(name):
    return len(np.unique(SETS[name]().target))


def export(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    print(f"| data set | n | d | K | file |\n|---|---|---|---|---|")
    for name, load in SETS.items():
        b = load()
        x = np.asarray(b.data, dtype=np.float64)
        k = len(np.unique(b.target))
        path = os.path.join(out_dir, f"{name}.csv")
        header = ",".join(f"f{i}" for i in range(x.shape[1]))
        np.savetxt(path, x, delimiter=",", header=header, comments="", fmt="%.17g")
        print(f"| {name} | {x.shape[0]} | {x.shape[1]} | {k} | {path} |")


def one_run(cmd, timeout):
    """(json or None, seconds, message): message is 'timeout' or the error."""
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t, f"timeout: killed after {timeout:g} s"
    secs = time.perf_counter() - t
    out = None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            out = json.loads(line)
    if out is not None and "error" in out:
        return None, secs, out["error"]
    if p.returncode != 0 or out is None:
        msg = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}")
        return None, secs, msg.replace("\n", " ")
    if p.stderr.strip():
        print(f"  stderr: {p.stderr.strip()}", file=sys.stderr)
    return out, secs, None


def fmt_ms(s):
    ms = 1e3 * s
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def run(args):
    sets = [("built-in Gaussian", None, 10, None)]
    for name in SETS:
        path = os.path.join(args.data_dir, f"{name}.csv")
        if not os.path.exists(path):
            sys.exit(f"{path} missing: run `real_data.py export {args.data_dir}` first")
        sets.append((name, path, natural_k(name), FILE_CLIENTS))

    rows = []
    for label, path, k, clients in sets:
        for scheme in SCHEMES:
            cmd = [args.mufc, "run"]
            if path is not None:
                cmd += ["--data", path, "--scale", "--k", str(k), "--clients", str(clients)]
            cmd += ["--privacy", scheme, "--json", "-q"]
            results, note, walls = [], None, []
            for i in range(args.repeat):
                out, secs, msg = one_run(cmd, args.timeout)
                walls.append(secs)
                print(f"{label} {scheme} #{i + 1}: {secs:.2f} s"
                      + (f" ({msg})" if msg else ""), file=sys.stderr)
                if msg is not None:
                    note = msg
                    break
                results.append(out)
            rows.append((label, k, clients, scheme, cmd, results, note))

    print()
    print("| data set | n | d | K | L | log2 B^d (from gamma) | --privacy | scheme used "
          "(scheme, t, elements, modulus bits) | server decode, median (min - max) ms "
          "| loss ratio | bytes per client |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    # n, d and B of a set, from any run of it that was not refused.
    shape = {r[0]: r[5][0] for r in rows if r[5]}
    for label, k, clients, scheme, cmd, results, note in rows:
        if not results:
            j = shape.get(label)
            nd = f"{j['n']} | {j['d']}" if j else " | "
            print(f"| {label} | {nd} | {k} | {clients or 100} | | {scheme} | "
                  f"{'refused' if not note.startswith('timeout') else 'timeout'}: {note} | | | |")
            continue
        j = results[0]
        b = math.ceil(1.0 / j["gamma"])
        log2_bd = j["d"] * math.log2(b)
        used = (f"{j['sketch_scheme']}, {j['sketch_capacity']}, "
                f"{j['sketch_elements']}, {j['modulus_bits']}")
        dec = [r["decode_seconds"] for r in results]
        loss = sorted({round(r["loss_ratio"], 4) for r in results})
        loss_s = " / ".join(f"{v:.4f}" for v in loss)
        bpc = sorted({r["bytes_per_client"] for r in results})
        extra = f" ({len(results)} runs; then {note})" if note else ""
        warn = sorted({w for r in results for w in r.get("privacy_warnings", [])})
        if warn:
            extra += " warnings: " + "; ".join(warn)
        print(f"| {label} | {j['n']} | {j['d']} | {j['k']} | {j['clients']} | "
              f"{log2_bd:.0f} (B = {b}) | {scheme} | {used} | "
              f"{fmt_ms(statistics.median(dec))} ({fmt_ms(min(dec))} - {fmt_ms(max(dec))})"
              f"{extra} | {loss_s} | {' / '.join(map(str, bpc))} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write the bundled data sets as CSV")
    e.add_argument("dir", nargs="?", default=DEFAULT_DIR)
    r = sub.add_parser("run", help="run every sketch scheme on every set")
    r.add_argument("--mufc", required=True, help="the mufc binary")
    r.add_argument("--data-dir", default=DEFAULT_DIR)
    r.add_argument("--repeat", type=int, default=5)
    r.add_argument("--timeout", type=float, default=60.0, help="seconds a run")
    args = ap.parse_args()
    if args.cmd == "export":
        export(args.dir)
    else:
        run(args)


if __name__ == "__main__":
    main()
