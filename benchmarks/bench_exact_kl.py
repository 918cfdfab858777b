"""The cost and the readings of ``exact_kl``, the distance of a fit to the exact posterior.

Run by hand: ``python benchmarks/bench_exact_kl.py [--n 1e5 3e5 1e6] [--mcmc-n 1e5]
[--draws 1000]``. Data: ``make_rare_events`` (d = 30 AR(0.6)-correlated Gaussian features,
0.1 % positives), one BLAS thread. For each N it prints

* the cost: the Laplace fit on all rows (the baseline, best of 2) and ``exact_kl`` of it with
  ``--draws`` draws (one pass over the rows), and their ratio;
* the reading: the Laplace fit's KL to the exact posterior of all rows, its standard error,
  Pareto k-hat, ESS and largest mean error in exact-posterior sd;
* an independent check of that reading: ``KL(q || p) = E_q[log q - log p~] + log Z_p`` with
  the first term from a second, independent set of Gaussian draws and ``log Z_p`` from
  importance sampling with a *different*, heavier-tailed proposal (a multivariate Student-t
  with 5 degrees of freedom, the Laplace location and scale): the two estimates must agree
  within their standard errors;

and, for each ``--mcmc-n``, the default coreset route ``QuasiNewtonCoreset()`` + NUTS
(``method="mcmc"``): its time, coreset size, and KL to the exact posterior with k-hat.
"""

import argparse
import warnings

import arviz  # noqa: F401  (its import, 1-3 s, is not timed as exact_kl's)
import numpy as np
from scipy import stats
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset._backend import InMemoryRows
from skcoreset._inference import log_joint, prior_precision
from skcoreset.datasets import make_rare_events
from skcoreset.metrics import exact_kl
from skcoreset.pipeline import Pipeline

from _common import best_of, timed

_T_DF = 5


def _student_t_check(clf, X, y, n_draws, seed):
    """``(kl, se)`` of the Laplace posterior by a Student-t proposal for ``log Z_p``."""
    rng = np.random.default_rng(seed)
    q = clf.posterior_
    family, p = clf.family_, len(q.mean)
    prior = prior_precision(X.shape[1], prior_scale=clf.prior_scale,
                            intercept_prior_scale=clf.intercept_prior_scale,
                            fit_intercept=clf.fit_intercept)
    rows = InMemoryRows(X, family.encode_target(y, clf.classes_), np.ones(len(y)))
    t = stats.multivariate_t(loc=q.mean, shape=q.cov, df=_T_DF)
    t_draws = t.rvs(size=n_draws, random_state=rng)
    log_ratio_t = log_joint(rows, family, t_draws, prior, True) - t.logpdf(t_draws)
    log_z = logsumexp(log_ratio_t) - np.log(n_draws)  # log Z_p (up to the constant of p~)
    w = np.exp(log_ratio_t - logsumexp(log_ratio_t))
    se_log_z = np.sqrt(np.sum(w**2) - 1.0 / n_draws)  # delta method: sd(ratio) / mean / sqrt(S)
    g_draws = q.sample(n_draws, random_state=rng)
    energy = q.logpdf(g_draws) - log_joint(rows, family, g_draws, prior, True)
    se = np.sqrt(np.var(energy, ddof=1) / n_draws + se_log_z**2)
    k = stats.genpareto.fit(np.sort(np.exp(log_ratio_t))[-n_draws // 5:])[0]  # for orientation
    return float(np.mean(energy) + log_z), float(se), float(k), p


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, nargs="+", default=[1e5, 3e5, 1e6])
    parser.add_argument("--mcmc-n", type=float, nargs="*", default=[1e5])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--d", type=int, default=30)
    args = parser.parse_args()
    print(f"make_rare_events(d={args.d}, positive_rate=0.001, correlation=0.6); "
          f"exact_kl with {args.draws} draws; one BLAS thread")
    print("\n| N | Laplace fit (s) | exact_kl (s) | ratio | Laplace KL to exact (nats) | "
          "k-hat | ESS | mean error (sd) | Student-t check (nats) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in map(int, args.n):
        X, y = make_rare_events(n, args.d, positive_rate=0.001, correlation=0.6,
                                random_state=0)
        fit_time, clf = best_of(lambda: BayesianLogisticRegression().fit(X, y), 2)
        kl_time, result = timed(lambda: exact_kl(clf, X, y, n_draws=args.draws,
                                                 random_state=1))
        check, check_se, _, _ = _student_t_check(clf, X, y, args.draws, seed=2)
        print(f"| {n:.0e} | {fit_time:.2f} | {kl_time:.2f} | {kl_time / fit_time:.1f} | "
              f"{result.kl:.3f} +- {result.kl_se:.3f} | {result.pareto_k:.2f} | "
              f"{result.ess:.0f} | {result.max_mean_error_sd:.2f} | "
              f"{check:.3f} +- {check_se:.3f} |", flush=True)
    if not args.mcmc_n:
        return
    print("\n| N | QuasiNewtonCoreset() + NUTS (s) | rows | KL to exact (nats) | k-hat | "
          "ESS | mean error (sd) | exact_kl (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in map(int, args.mcmc_n):
        X, y = make_rare_events(n, args.d, positive_rate=0.001, correlation=0.6,
                                random_state=0)
        pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                         ("clf", BayesianLogisticRegression(method="mcmc", random_state=0))],
                        exact_correction=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit_time, _ = timed(lambda: pipe.fit(X, y))
        kl_time, result = timed(lambda: exact_kl(pipe, X, y, n_draws=args.draws))
        rows = len(pipe.named_steps["coreset"].sample_indices_)
        print(f"| {n:.0e} | {fit_time:.1f} | {rows} | {result.kl:.3f} +- {result.kl_se:.3f} | "
              f"{result.pareto_k:.2f} | {result.ess:.0f} | {result.max_mean_error_sd:.2f} | "
              f"{kl_time:.1f} |", flush=True)


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
