#!/usr/bin/env python3
"""FLINT's root finding on the inputs of `cargo bench -p field --bench algorithms`.

For each prime and degree m, builds the product of m random distinct linear
factors (random nonzero roots, product tree in FLINT) and times `.roots()`:
`nmod_poly` for 2^61 - 1, `fmpz_mod_poly` (through `fmpz_mod_poly_ctx`) for
2^127 - 1 and the 1024-bit prime 2^1023 + 1155 (testdata::known_primes::p1024).
Prints the median (and min, max) over the repetitions, in the group names
of the Rust bench. Needs `pip install python-flint` (tested with 0.9.0).

Usage: python3 benches/peers/flint_roots.py [--reps N] [--sizes 100,400,1000,4000]
       [--fields mersenne61,mersenne127,big1024] [--max-seconds S]

A case whose first run exceeds --max-seconds (default 600) is not repeated.
"""

import argparse
import random
import statistics
import sys
import time

import flint

PRIMES = {
    "mersenne61": (1 << 61) - 1,
    "mersenne127": (1 << 127) - 1,
    "big1024": (1 << 1023) + 1155,
}


def product(factors):
    """Product tree, so that building the input is fast."""
    while len(factors) > 1:
        nxt = [factors[i] * factors[i + 1] for i in range(0, len(factors) - 1, 2)]
        if len(factors) % 2:
            nxt.append(factors[-1])
        factors = nxt
    return factors[0]


def make_poly(name, p, m, rng):
    roots = set()
    while len(roots) < m:
        r = rng.randrange(1, p)
        roots.add(r)
    roots = sorted(roots)
    if name == "mersenne61":
        lin = [flint.nmod_poly([(-r) % p, 1], p) for r in roots]
    else:
        ctx = flint.fmpz_mod_poly_ctx(p)
        lin = [ctx([(-r) % p, 1]) for r in roots]
    return product(lin), roots


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="100,400,1000,4000")
    ap.add_argument("--fields", default="mersenne61,mersenne127,big1024")
    ap.add_argument("--max-seconds", type=float, default=600.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"python-flint {flint.__version__}, FLINT {flint.__FLINT_VERSION__}", flush=True)
    for name in args.fields.split(","):
        p = PRIMES[name]
        for m in sizes:
            rng = random.Random(f"{name}/{m}")
            f, roots = make_poly(name, p, m, rng)
            times = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                found = f.roots()
                times.append(time.perf_counter() - t0)
                got = sorted(int(r) for r, mult in found)
                if got != roots or any(mult != 1 for _, mult in found):
                    sys.exit(f"{name} m={m}: FLINT returned wrong roots")
                if times[-1] > args.max_seconds:
                    break
            med = statistics.median(times)
            print(
                f"roots/{name}/m={m}: median {med:.4g} s "
                f"(min {min(times):.4g}, max {max(times):.4g}, {len(times)} runs)",
                flush=True,
            )


if __name__ == "__main__":
    main()
