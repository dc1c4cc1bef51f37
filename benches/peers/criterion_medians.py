#!/usr/bin/env python3
"""Prints the median of every criterion benchmark of a group prefix, from
`target/criterion/*/*/new/estimates.json` (criterion's own estimates).

Usage: python3 benches/peers/criterion_medians.py [prefix ...]
       (default prefixes: bm roots vandermonde)
"""

import glob
import json
import sys


def fmt(ns):
    if ns >= 1e9:
        return f"{ns / 1e9:.3g} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    return f"{ns / 1e3:.3g} µs"


def main():
    prefixes = sys.argv[1:] or ["bm", "roots", "vandermonde"]
    rows = {}
    for path in glob.glob("target/criterion/*/*/new/estimates.json"):
        group, bench = path.split("/")[2:4]
        alg, _, field = group.partition("_")
        if alg not in prefixes:
            continue
        est = json.load(open(path))
        rows[(alg, field, bench)] = est["median"]["point_estimate"]
    key = lambda k: (k[0], k[1], int(k[2].split("=")[-1]) if "=" in k[2] else 0)
    for k in sorted(rows, key=key):
        print(f"{k[0]}/{k[1]}/{k[2]}: median {fmt(rows[k])}")


if __name__ == "__main__":
    main()
