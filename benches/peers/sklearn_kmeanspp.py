#!/usr/bin/env python3
"""scikit-learn's K-means++ seeding on the paper's Gaussian data set.

Peer of `cargo bench -p seeding --bench seeding -- seeding/kmeanspp`: the
same distribution (Appendix M.1 of the paper: 10 clusters of 3000 points in
d = 10, centres uniform in the unit hypercube, spherical with variance 0.5),
drawn with numpy. Prints the median time of `kmeans_plusplus` over repeated
runs, with n_local_trials=1 (plain K-means++, what `seeding` implements) and
with scikit-learn's default (greedy K-means++, 2 + log k candidates a round).

Run by hand, never in CI:  python3 benches/peers/sklearn_kmeanspp.py
Needs: pip install scikit-learn
"""

import statistics
import sys
import time

import numpy as np
import sklearn
from sklearn.cluster import kmeans_plusplus


def gaussian_mixture(rng, dim=10, k=10, per=3000):
    centres = rng.uniform(0.0, 1.0, size=(k, dim))
    sd = np.sqrt(0.5)
    x = np.concatenate([c + sd * rng.standard_normal((per, dim)) for c in centres])
    return np.ascontiguousarray(x)


def median_ms(f, repeats):
    f()  # warm up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    rng = np.random.default_rng(2023)
    x = gaussian_mixture(rng)
    k = 10
    seeds = iter(range(10**9))
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}; "
          f"n={x.shape[0]}, d={x.shape[1]}, k={k}; median of {repeats} runs")
    plain = median_ms(lambda: kmeans_plusplus(x, k, n_local_trials=1,
                                              random_state=next(seeds)), repeats)
    print(f"kmeans_plusplus n_local_trials=1        {plain:8.3f} ms")
    greedy = median_ms(lambda: kmeans_plusplus(x, k, random_state=next(seeds)), repeats)
    trials = 2 + int(np.log(k))
    print(f"kmeans_plusplus default (trials={trials})     {greedy:8.3f} ms")


if __name__ == "__main__":
    main()
