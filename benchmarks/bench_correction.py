"""The cost and the effect of ``Pipeline(exact_correction=True)``.

Run by hand: ``python benchmarks/bench_correction.py [--n 1e5 1e6] [--d 30]
[--ref-draws 4000]``. Data: ``make_rare_events`` (AR(0.6)-correlated Gaussian features,
0.1 % positives), one BLAS thread. For each N it prints the time of

* the baseline, a Laplace fit on all rows (``BayesianLogisticRegression()``);
* the coreset route, ``QuasiNewtonCoreset()`` + NUTS (``method="mcmc"``);
* the correction alone (the importance-weighting pass over all rows of the route's draws,
  PSIS and resampling, as the pipeline runs it at the end of ``fit``);

and, against an exact reference (the exact posterior's mean and sd by importance weighting
from a different proposal, ``--ref-draws`` draws of the full-data Laplace approximation, with
its k-hat), the route's largest mean error in reference sd and its range of sd ratios,
without and with the correction, plus the route's KL to the exact posterior before
correction (``kl_before_``) with k-hat and the ESS after weighting.
"""

import argparse
import warnings

import arviz  # noqa: F401  (its import is not timed as the correction's)
import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset.datasets import make_rare_events
from skcoreset.metrics import exact_kl
from skcoreset.pipeline import Pipeline

from _common import timed


def _errors(posterior, ref):
    sd = np.sqrt(np.diag(posterior.cov))
    return np.max(np.abs(posterior.mean - ref.mean) / ref.sd), sd / ref.sd


def _route(correction):
    return Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                     ("clf", BayesianLogisticRegression(method="mcmc", random_state=0))],
                    exact_correction=correction)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=float, nargs="+", default=[1e5])
    parser.add_argument("--d", type=int, default=30)
    parser.add_argument("--ref-draws", type=int, default=4000)
    args = parser.parse_args()
    print(f"make_rare_events(d={args.d}, positive_rate=0.001, correlation=0.6); one thread")
    print("| N | Laplace all rows (s) | coreset + NUTS (s) | correction (s) | rows | "
          "KL before (nats) | k-hat | ESS | mean err (sd) raw / corrected | "
          "sd ratio raw | sd ratio corrected | reference k-hat |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(v) for v in args.n):
        X, y = make_rare_events(n, args.d, positive_rate=0.001, correlation=0.6,
                                random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            laplace_time, laplace = timed(lambda: BayesianLogisticRegression().fit(X, y))
            ref = exact_kl(laplace, X, y, n_draws=args.ref_draws, random_state=1)
            route_time, raw = timed(lambda: _route(False).fit(X, y))
            corrected_time, corrected = timed(lambda: _route(True).fit(X, y))
        raw_err, raw_ratio = _errors(raw[-1].posterior_, ref)
        err, ratio = _errors(corrected[-1].posterior_, ref)
        print(f"| {n:.0e} | {laplace_time:.2f} | {route_time:.1f} | "
              f"{corrected_time - route_time:.1f} | {len(raw[0].sample_indices_)} | "
              f"{corrected.kl_before_:.3f} | {corrected.pareto_k_:.2f} | "
              f"{corrected.importance_ess_:.0f} | {raw_err:.3f} / {err:.3f} | "
              f"{raw_ratio.min():.3f}-{raw_ratio.max():.3f} | "
              f"{ratio.min():.3f}-{ratio.max():.3f} | {ref.pareto_k:.2f} |", flush=True)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
