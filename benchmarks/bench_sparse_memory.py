"""Memory of a fit on sparse one-hot rows: how much the process grows, against
scikit-learn's ``LogisticRegression`` on the same CSR matrix.

Run by hand: ``python benchmarks/bench_sparse_memory.py [--n N] [--fits laplace ...]``
(default N = 1e6 rows of 2,000 one-hot columns, 10 nonzeros per row, the rows of
``bench_sparse.py``). Each fit runs in a fresh process with one BLAS thread, after a
warm-up fit on 2,000 rows (imports and first-call allocations are not counted); the
table gives the growth of the resident set at its peak during the fit (``VmHWM`` after
resetting it, minus ``VmRSS`` before) and the peak of Python's traced allocations
(``tracemalloc``, every numpy and scipy array).

Besides the growth, the table gives the fitted result's own arrays (a posterior's mean and
the ``p x p`` matrices it holds after the fit: the covariance's Cholesky factor, 30.5 MiB
at p = 2,001, which a point estimate does not compute; scikit-learn's coefficients) and the
growth without them, against scikit-learn's ``LogisticRegression`` with its default solver
(L-BFGS, the baseline of the ratios) and with ``solver="newton-cholesky"`` (which also forms
a ``p x p`` Hessian).
"""

import argparse
import os
import subprocess
import sys

FITS = {
    "sklearn": "LogisticRegression(C=1.0)",
    "sklearn_newton": "LogisticRegression(C=1.0, solver='newton-cholesky')",
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
start, cpu = time.perf_counter(), time.process_time()
est = {fit}.fit(X, y)
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = status("VmHWM") - before
traced = tracemalloc.get_traced_memory()[1] / 2**20
est = est[-1] if hasattr(est, "steps") else est
post = getattr(est, "posterior_", None)
arrays = ([est.coef_, est.intercept_] if post is None else
          [post.mean, post.cov_cholesky, post._precision, getattr(post, "_cov", None)])
own = sum(a.nbytes for a in arrays if a is not None) / 2**20
print(seconds, cpu, peak, traced, own)
"""


def run(fit, n):
    code = CHILD.format(bench=os.path.dirname(os.path.abspath(__file__)), n=n, fit=FITS[fit])
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return [float(v) for v in out[-5:]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--fits", nargs="+", default=list(FITS), choices=list(FITS))
    args = parser.parse_args()
    rows = {fit: run(fit, int(args.n)) for fit in args.fits}
    base = rows.get("sklearn")
    print(f"N = {int(args.n):,}, 2,000 one-hot columns, 10 nonzeros per row\n")
    print("| fit | time (s) | CPU (s) | RSS growth at peak (MiB) | / sklearn | result's "
          "arrays (MiB) | growth without them (MiB) | / sklearn | traced peak (MiB) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for fit, (seconds, cpu, growth, traced, own) in rows.items():
        ratio = f"{growth / base[2]:.1f}" if base else "-"
        ratio_rest = f"{(growth - own) / (base[2] - base[4]):.1f}" if base else "-"
        print(f"| {FITS[fit]} | {seconds:.2f} | {cpu:.2f} | {growth:.0f} | {ratio} | {own:.1f} "
              f"| {growth - own:.0f} | {ratio_rest} | {traced:.0f} |")


if __name__ == "__main__":
    main()
