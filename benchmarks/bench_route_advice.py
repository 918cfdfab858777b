"""Which route is faster at equal accuracy: NUTS on all rows, or a coreset and NUTS on it.

Run by hand: ``python benchmarks/bench_route_advice.py [--cells family:N:d ...]
[--draws 1000] [--table]``. One BLAS thread. For each cell (family, N rows, d features) it
fits, on the same data:

* **NUTS on all rows**: the family's estimator with ``method="mcmc"``, ``n_draws=--draws``
  (the bulk effective sample size it runs to; 4 chains), the exact posterior up to Monte
  Carlo error;
* **the coreset route**: ``Pipeline([("coreset", QuasiNewtonCoreset()), ("est", <the same
  estimator>)])``, the default coreset (``M="auto"``) and the same NUTS settings, timed end
  to end; its distance to the exact posterior of all rows by
  :func:`skcoreset.metrics.exact_kl` over every draw of its run, whose time is that of the
  pipeline's ``exact_correction`` (the same weights, one pass over the rows);
* **Laplace on all rows**: its time and its ``exact_kl`` (``--draws`` draws).

The faster route at equal accuracy: the coreset route counts at its own time when its
posterior is within ``EQUAL_KL`` = 0.02 nats of the exact one (the Monte Carlo error of a
run of 1,000 effective draws in the means alone is about ``p / 2000`` nats, 0.016 at
p = 31), else at its time plus the correction's when the weights' k-hat is at most 0.7
(the corrected draws are then exact), else it cannot match NUTS on all rows. Times are CPU
seconds of this one-thread process (on a shared machine the part other jobs do not
inflate); wall seconds are printed too.

The measurements go to ``benchmarks/results/route_advice.json``; ``--table`` prints the
table from it again, with the package's rule
(``skcoreset._advice.coreset_pays``) and its agreement with the measured faster route.
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import arviz  # noqa: E402,F401  (its import, seconds, is not timed as exact_kl's)
import numpy as np  # noqa: E402
from scipy.special import expit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _common import results_dir  # noqa: E402
from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,  # noqa: E402
                       BayesianPoissonRegression, QuasiNewtonCoreset)
from skcoreset.metrics import exact_kl  # noqa: E402
from skcoreset.pipeline import Pipeline  # noqa: E402

EQUAL_KL = 0.02
MAX_K = 0.7
ESTIMATORS = {"logistic": BayesianLogisticRegression, "poisson": BayesianPoissonRegression,
              "negative_binomial": BayesianNegativeBinomialRegression}
CELLS = ["logistic:1000:5", "logistic:2000:30", "logistic:5000:10", "logistic:30000:30",
         "logistic:300000:10", "poisson:1000:5", "poisson:3000:20", "poisson:200000:5",
         "negative_binomial:2000:3", "negative_binomial:50000:10"]
RESULTS = "route_advice.json"


def make_cell(family, n, d, seed=0):
    """AR(0.6)-correlated standard normal features; logistic labels (coefficients of norm 2,
    intercept -1), Poisson counts (norm 0.5, intercept 0.5) or negative binomial counts
    (the same rates, overdispersion 0.5)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    for j in range(1, d):
        X[:, j] = 0.6 * X[:, j - 1] + 0.8 * X[:, j]
    coef = rng.normal(size=d)
    if family == "logistic":
        coef *= 2.0 / np.linalg.norm(coef)
        return X, (rng.random(n) < expit(X @ coef - 1.0)).astype(int)
    coef *= 0.5 / np.linalg.norm(coef)
    mu = np.exp(X @ coef + 0.5)
    if family == "poisson":
        return X, rng.poisson(mu).astype(float)
    r = 2.0  # alpha = 0.5
    return X, rng.negative_binomial(r, r / (r + mu)).astype(float)


def clocked(fn):
    """``(wall seconds, CPU seconds, fn())``, warnings silenced (they are reported by the
    fits' own diagnostics, not here)."""
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def measure(family, n, d, draws, repeats, all_rows=None):
    """The cell's measurements; ``all_rows``: ``(CPU s, wall s)`` of NUTS on all rows from an
    earlier run, kept instead of rerunning it."""
    X, y = make_cell(family, n, d)
    cls = ESTIMATORS[family]
    mcmc = dict(method="mcmc", n_draws=draws, random_state=0)
    runs = []
    for _ in range(repeats):  # the fastest run of each route, the least disturbed
        all_wall, all_cpu, _ = ((all_rows[1], all_rows[0], None) if all_rows
                                else clocked(lambda: cls(**mcmc).fit(X, y)))
        pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                         ("est", cls(**mcmc))], exact_correction=False)
        route_wall, route_cpu, _ = clocked(lambda: pipe.fit(X, y))
        runs.append((all_cpu, all_wall, route_cpu, route_wall))
        if all_cpu > 20 and not all_rows:  # a long run is timed once
            break
    all_cpu, all_wall = min(run[:2] for run in runs)
    route_cpu, route_wall = min(run[2:] for run in runs)
    n_run = len(pipe[-1].posterior_.samples)
    corr_wall, corr_cpu, route_kl = clocked(
        lambda: exact_kl(pipe, X, y, n_draws=n_run, random_state=0))
    lap_wall, lap_cpu, laplace = clocked(lambda: cls().fit(X, y))
    _, _, lap_kl = clocked(lambda: exact_kl(laplace, X, y, n_draws=draws, random_state=0))
    return dict(family=family, n=n, d=d, draws=draws, repeats=len(runs),
                all_wall=all_wall, all_cpu=all_cpu,
                route_wall=route_wall, route_cpu=route_cpu,
                rows=int(len(pipe.named_steps["coreset"].sample_indices_)),
                route_kl=route_kl.kl, route_kl_se=route_kl.kl_se, route_k=route_kl.pareto_k,
                corr_wall=corr_wall, corr_cpu=corr_cpu, run_draws=n_run,
                laplace_cpu=lap_cpu, laplace_kl=lap_kl.kl, laplace_k=lap_kl.pareto_k)


def route_at_equal_accuracy(cell):
    """CPU seconds of the coreset route at the accuracy of NUTS on all rows (inf when the
    correction cannot reach it)."""
    if cell["route_kl"] <= EQUAL_KL:
        return cell["route_cpu"]
    if cell["route_k"] <= MAX_K:
        return cell["route_cpu"] + cell["corr_cpu"]
    return np.inf


def print_table(cells):
    from skcoreset._advice import ROWS_PER_CORESET_ROW, coreset_pays, default_coreset_rows

    print("\n| family | N | d | NUTS all rows, CPU (wall) s | coreset + NUTS, CPU (wall) s "
          "| rows | KL to exact (nats) | k-hat | correction s | route at equal accuracy s "
          "| measured faster | rule | Laplace s | Laplace KL (k-hat) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    agree = 0
    for c in cells:
        equal = route_at_equal_accuracy(c)
        measured = "coreset" if equal < c["all_cpu"] else "all rows"
        rule = "coreset" if coreset_pays(c["n"], c["d"]) else "all rows"
        agree += measured == rule
        print(f"| {c['family']} | {c['n']:.0e} | {c['d']} | {c['all_cpu']:.1f} "
              f"({c['all_wall']:.1f}) | {c['route_cpu']:.1f} ({c['route_wall']:.1f}) | "
              f"{c['rows']} | {c['route_kl']:.3f} +- {c['route_kl_se']:.3f} | "
              f"{c['route_k']:.2f} | {c['corr_cpu']:.1f} | {equal:.1f} | **{measured}** | "
              f"{rule}{'' if rule == measured else ' (differs)'} | {c['laplace_cpu']:.2f} | "
              f"{c['laplace_kl']:.3f} ({c['laplace_k']:.2f}) |")
    print(f"\nThe rule agrees with the measured faster route on {agree} of {len(cells)} cells.")
    # the rule's one constant, fitted: agreement of "N >= k x the default coreset's rows"
    fits = {k: sum((route_at_equal_accuracy(c) < c["all_cpu"])
                   == (c["n"] >= k * default_coreset_rows(c["d"])) for c in cells)
            for k in (1, 2, 3, 4, 5, 6, 8, 10)}
    print("Agreement of N >= k x max(500, p (p + 3) / 2) by k: "
          + ", ".join(f"k={k}: {n}" for k, n in fits.items())
          + f" (the package's k: {ROWS_PER_CORESET_ROW})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cells", nargs="+", default=CELLS)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each route (the fastest kept) when under 20 CPU s")
    parser.add_argument("--reuse-all-rows", action="store_true",
                        help="keep the NUTS-on-all-rows times of the saved cells, rerun the "
                             "coreset route only")
    parser.add_argument("--table", action="store_true",
                        help=f"print the table of results/{RESULTS} without measuring")
    args = parser.parse_args()
    path = results_dir() / RESULTS
    if args.table:
        print_table(json.loads(path.read_text()))
        return
    done = {(c["family"], c["n"], c["d"]): c for c in
            (json.loads(path.read_text()) if path.exists() else [])}
    for spec in args.cells:
        family, n, d = spec.split(":")
        key = (family, int(float(n)), int(d))
        saved = done.get(key) if args.reuse_all_rows else None
        cell = measure(*key, args.draws, args.repeats,
                       (saved["all_cpu"], saved["all_wall"]) if saved else None)
        done[(family, cell["n"], cell["d"])] = cell
        print(json.dumps(cell), flush=True)
        path.write_text(json.dumps(list(done.values()), indent=1))
    print_table([done[key] for key in sorted(done, key=lambda k: (k[0], k[1], k[2]))])


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
