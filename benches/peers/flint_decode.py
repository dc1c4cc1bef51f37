#!/usr/bin/env python3
"""FLINT's full syndrome decode on the input of the decode_scale example.

Peer of `crates/syndrome-agg/examples/decode_scale.rs`: reads the file that
example writes with --write (the prime p, t, the 2t syndromes
s_i = sum_j q_j x_j^(i-1) for i = 1..2t, then the t keys x_j ascending and
their t counts q_j, one decimal integer a line) and times the decode through
python-flint's fmpz_mod_poly (context fmpz_mod_poly_ctx(fmpz_mod_ctx(p))),
with FLINT's own entry points:

  minpoly  fmpz_mod_poly_ctx.minpoly(s_1..s_2t): the minimal generating
           polynomial M(z) = prod_j (z - x_j) (fmpz_mod_poly_minpoly:
           half-GCD Berlekamp-Massey from 508 terms on at a one-word
           modulus, the classical one below); M is the reversed locator, the
           reverse of the connection polynomial Lambda(y) = prod_j (1 - x_j y);
  roots    M.roots(): the keys x_j, each of multiplicity one;
  counts   N(y) = Lambda(y) S(y) mod y^t with S(y) = sum_i s_(i+1) y^i
           (mul_low), and q_j = -x_j N(1/x_j) / Lambda'(1/x_j), evaluated in
           the equivalent reversed form q_j = Nrev(x_j) / M'(x_j), where
           Nrev(z) = z^(t-1) N(1/z), by two multipoint_evaluate calls and t
           divisions.

There is no re-encode check stage: python-flint exposes no interpolation or
subproduct-tree linear combination to re-encode (x_j, q_j) in quasi-linear
time. (Our decoder's re-encode is the `check` line of decode_scale.) The
answer is checked, outside the timings, against the file's keys and counts.
Prints each stage's seconds as it ends, then the median (min, max) of each
stage and of the total over --repeat runs.

Run by hand, never in CI. From the workspace root:

  cargo run --release -p syndrome-agg --example decode_scale -- \\
      --field goldilocks --t 10000 --repeat 3 --write /tmp/decode_g10000.txt
  python3 benches/peers/flint_decode.py /tmp/decode_g10000.txt --repeat 3

Needs: pip install python-flint (written against python-flint 0.9.0,
FLINT 3.6.0). The input file is generated data: do not commit it.
"""

import argparse
import statistics
import sys
import time

import flint


def read_input(path):
    try:
        with open(path) as fh:
            vals = [int(line) for line in fh if line.strip()]
    except OSError as e:
        sys.exit(f"cannot read {path}: {e.strerror}")
    except ValueError as e:
        sys.exit(f"{path}: not one decimal integer a line ({e})")
    if len(vals) < 2:
        sys.exit(f"{path}: expected p and t on the first two lines")
    p, t = vals[0], vals[1]
    if t < 1 or len(vals) != 2 + 4 * t:
        sys.exit(f"{path}: expected 2 + 4t = {2 + 4 * t} lines for t = {t}, found {len(vals)}")
    s = vals[2 : 2 + 2 * t]
    keys = vals[2 + 2 * t : 2 + 3 * t]
    counts = vals[2 + 3 * t :]
    return p, t, s, keys, counts


def decode(ctx, s, t, progress):
    """The three stages; returns the keys, the counts and the seconds of
    (minpoly, roots, counts). `progress(name, seconds)` is called after each
    stage, outside the timings."""
    t0 = time.perf_counter()
    m = ctx.minpoly(s)
    minpoly_s = time.perf_counter() - t0
    progress("minpoly", minpoly_s)

    t0 = time.perf_counter()
    found = m.roots()
    roots_s = time.perf_counter() - t0
    progress("roots", roots_s)
    if m.degree() != t or len(found) != t or any(mult != 1 for _, mult in found):
        sys.exit(
            f"minpoly of degree {m.degree()} with {len(found)} roots: "
            f"not a vector of {t} distinct keys"
        )

    t0 = time.perf_counter()
    xs = [r for r, _ in found]
    lam = m.reverse()  # Lambda(y) = y^t M(1/y); M is monic, so Lambda(0) = 1
    n = lam.mul_low(ctx(s[:t]), t)
    nrev = n.reverse(degree=t - 1)
    num = nrev.multipoint_evaluate(xs)
    den = m.derivative().multipoint_evaluate(xs)
    qs = [a / b for a, b in zip(num, den)]
    counts_s = time.perf_counter() - t0
    progress("counts", counts_s)
    return xs, qs, (minpoly_s, roots_s, counts_s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="the file written by decode_scale --write")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")
    p, t, s, keys, counts = read_input(args.file)
    print(
        f"python-flint {flint.__version__}, FLINT {flint.__FLINT_VERSION__}; "
        f"p = {p}, t = {t}, 2t = {len(s)} syndromes",
        flush=True,
    )
    ctx = flint.fmpz_mod_poly_ctx(flint.fmpz_mod_ctx(p))
    times = []
    for run in range(1, args.repeat + 1):
        def progress(name, secs, run=run):
            print(f"  run {run}: {name} {secs:.6f} s", flush=True)

        xs, qs, secs = decode(ctx, s, t, progress)
        times.append(secs)
        got = sorted((int(x), int(q)) for x, q in zip(xs, qs))
        if got != list(zip(keys, counts)):
            sys.exit("FLINT's decode differs from the keys and counts in the file")
    names = ("minpoly", "roots", "counts")
    columns = list(zip(*times)) + [[sum(run) for run in times]]
    for name, col in zip(names + ("total",), columns):
        print(
            f"{name:<16} {statistics.median(col):>12.6f} s   "
            f"(min {min(col):.6f}, max {max(col):.6f}, {len(col)} runs)"
        )
    print("decoded vector equals the file's keys and counts")


if __name__ == "__main__":
    main()
