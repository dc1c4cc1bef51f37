"""Writes the example's records: four clients, each a .npy of points in
the quantizer's box (three blobs, each client holding two of them) and the
points' ids (their rows in records.csv), and records.csv itself (client,
then the coordinates), the file `mufc fit --client-column 0` reads."""

import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "data"
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
rows = []
centres = np.array([[-0.3, -0.3], [0.3, -0.2], [0.0, 0.3]])
for c in range(4):
    mine = centres[[c % 3, (c + 1) % 3]]
    labels = rng.integers(0, 2, size=60)
    points = np.clip(mine[labels] + rng.normal(0, 0.05, size=(60, 2)), -0.5, 0.5)
    np.save(os.path.join(out, f"client-{c}.npy"), points)
    np.save(os.path.join(out, f"client-{c}.ids.npy"), np.arange(len(rows), len(rows) + len(points)))
    rows += [",".join([str(c)] + [repr(float(v)) for v in p]) for p in points]
with open(os.path.join(out, "records.csv"), "w") as f:
    f.write("\n".join(rows) + "\n")
print(f"wrote 4 clients to {out}/")
