"""Memory of a fit on sparse one-hot rows: how much the process grows, against
scikit-learn's ``LogisticRegression`` on the same CSR matrix.

Run by hand: ``python benchmarks/bench_sparse_memory.py [--n N] [--fits laplace ...]``
(default N = 1e6 rows of 2,000 one-hot columns, 10 nonzeros per row, the rows of
``bench_sparse.py``). Each fit runs in a fresh process with one BLAS thread, after a
warm-up fit on 2,000 rows (imports and first-call allocations are not counted); the
table gives the growth of the resident set at its peak during the fit (``VmHWM`` after
resetting it, minus ``VmRSS`` before) and the peak of Python's traced allocations
(``tracemalloc``, every numpy and scipy array).

A Laplace posterior of p parameters holds a p x p precision and its Cholesky factor (2 x
30.5 MiB at p = 2,001) that a point estimate does not: the floor of its growth is
scikit-learn's plus those two matrices.
"""

import argparse
import os
import subprocess
import sys

FITS = {
    "sklearn": "LogisticRegression(C=1.0)",
    "laplace": "BayesianLogisticRegression()",
    "kl_proximal": "BayesianLogisticRegression(method='kl_proximal')",
    "pipeline": "Pipeline([('coreset', QuasiNewtonCoreset()), "
                "('clf', BayesianLogisticRegression())])",
}

CHILD = r"""
import gc, sys, time, tracemalloc
sys.path.insert(0, {bench!r})
import numpy as np
from bench_sparse import one_hot_rows
from sklearn.linear_model import LogisticRegression
from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.pipeline import Pipeline

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) / 1024

X, y = one_hot_rows({n}, 2000, 10, np.random.default_rng(0))
{fit}.fit(X[:2000], y[:2000])
gc.collect()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before = status("VmRSS")
tracemalloc.start()
start = time.perf_counter()
{fit}.fit(X, y)
seconds = time.perf_counter() - start
print(seconds, status("VmHWM") - before, tracemalloc.get_traced_memory()[1] / 2**20)
"""


def run(fit, n):
    code = CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), n=n, fit=FITS[fit])
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return [float(v) for v in out[-3:]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--fits", nargs="+", default=list(FITS), choices=list(FITS))
    args = parser.parse_args()
    rows = {fit: run(fit, int(args.n)) for fit in args.fits}
    base = rows.get("sklearn")
    print(f"N = {int(args.n):,}, 2,000 one-hot columns, 10 nonzeros per row\n")
    print("| fit | time (s) | RSS growth at peak (MiB) | / sklearn | traced peak (MiB) |")
    print("|---|---|---|---|---|")
    for fit, (seconds, growth, traced) in rows.items():
        ratio = f"{growth / base[1]:.1f}" if base else "-"
        print(f"| {FITS[fit]} | {seconds:.2f} | {growth:.0f} | {ratio} | {traced:.0f} |")


if __name__ == "__main__":
    main()
