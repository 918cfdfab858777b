"""Every route to the posterior at N = 1e6, against the exact posterior of all rows.

Run by hand: ``python benchmarks/bench_routes_1e6.py [--n 1e6] [--shapes rare clustered
poisson] [--ref-draws 16000] [--nuts-n 1e5] [--honesty-n 5e4]``. One BLAS thread. Shapes (seed 0):

* ``rare``: ``make_rare_events(d=30, positive_rate=0.001, correlation=0.6)``, logistic;
* ``clustered``: ``make_clustered(d=50)`` (a fifth of the rows shifted), logistic;
* ``poisson``: ``make_heavy_tailed(d=20)`` (standardised log-normal features), Poisson.

Routes, each timed by part: the Laplace fit on all rows, the KL-proximal fit on all rows,
``QuasiNewtonCoreset()`` + NUTS (``method="mcmc"``) without and with the exact correction
(the correction as ``Pipeline(exact_correction=True)`` runs it: ``correction_draws`` draws
of the run, float32 differences). For each: ``exact_kl`` to the exact posterior (1,000
draws, float32; the Gaussian routes' ``n_draws`` of their own draws), Pareto k-hat, and
against an **independent reference** -- self-normalised importance sampling from a wider
proposal (a multivariate Student-t with 5 degrees of freedom at the full-data Laplace mode,
its covariance scaled by 1.2^2, ``--ref-draws`` draws, float64 pass) -- the largest
posterior-mean difference in reference sd and the range of sd ratios. The reference also
gives ``log Z_p``, hence an independent KL of the Gaussian routes: ``E_q[log q - log p~] +
log Z_p`` from a second set of their draws, to set beside ``exact_kl``'s.

On ``rare`` it also times the correction as it was (all of the run's draws, float64) and
thinned in float64, with the largest difference of ``log p~`` between float32 and float64
at the same draws; and NUTS on all rows, which is not affordable at 1e6 here: NumPyro
(dense mass matrix set to the Laplace covariance, 300 warm-up steps, 1,000 draws) is run
on ``--nuts-n`` rows for its leapfrog steps per draw and its time, and one gradient of the
same potential at N rows is timed, so ``steps x (1,300) x gradient time`` extrapolates the
run at N (said so in the output).

Two lighter modes answer one question each:

* ``--mc-check`` (e.g. ``--n 1e5 --n-draws 16000 --correction-draws 16000 --ref-draws
  64000 --ref-dtype float32``): is the corrected route within 0.05 sd and 5 % of the
  reference once the Monte Carlo error is small enough to tell? Only the Laplace fit (the
  reference's location), the reference, the uncorrected route with ``n_draws`` effective
  draws and its correction weighting ``--correction-draws`` of them; each largest mean
  difference with its combined Monte Carlo standard error (``sqrt(1 / ESS + 1 / ESS_ref)``
  in sd, the route's ESS per parameter: NUTS's, or the importance ESS times the run's
  ESS per draw) and the largest ``|difference| / se``; likewise the largest sd error with
  its se (the delta method's for the reference's self-normalised variance, the draws'
  squared deviations for the route's, counting NUTS draws, or the importance ESS, as
  independent).
* ``--kl-only``: the uncorrected route's ``exact_kl`` (coreset sized by the default rule in
  the pipeline), its rows and the time of each part, against full-data Laplace's, no
  reference.
"""

import argparse
import contextlib
import io
import os
import re
import time
import warnings
from functools import partial

import arviz  # noqa: F401  (its import is not timed as the correction's)
import numpy as np
from scipy import stats
from scipy.special import logsumexp
from threadpoolctl import threadpool_limits

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       QuasiNewtonCoreset)
from skcoreset._backend import InMemoryRows
from skcoreset._inference import importance_summary, log_joint, prior_precision
from skcoreset.datasets import make_clustered, make_heavy_tailed, make_rare_events
from skcoreset.metrics import exact_kl
from skcoreset.metrics._exact import correction_draws, exact_correction
from skcoreset.pipeline import Pipeline

from _common import timed

SHAPES = {
    "rare": ("rare events 0.1 %, logistic, d = 30, AR(0.6)", BayesianLogisticRegression,
             partial(make_rare_events, n_features=30, positive_rate=0.001, correlation=0.6)),
    "clustered": ("clustered, logistic, d = 50", BayesianLogisticRegression,
                  partial(make_clustered, n_features=50)),
    "poisson": ("log-normal features, Poisson, d = 20", BayesianPoissonRegression,
                partial(make_heavy_tailed, n_features=20)),
}
_T_DF = 5
_DTYPES = {"float64": np.float64, "float32": np.float32}
_WIDER = 1.2


def _model(estimator, X, y):
    """``(rows, family, prior precision)`` of the exact posterior, in float64."""
    family = estimator.family_
    classes = getattr(estimator, "classes_", None)
    y_enc = family.encode_target(y) if classes is None else family.encode_target(y, classes)
    prior = prior_precision(X.shape[1], prior_scale=estimator.prior_scale,
                            intercept_prior_scale=estimator.intercept_prior_scale,
                            fit_intercept=estimator.fit_intercept)
    return InMemoryRows(X, y_enc, np.ones(len(y))), family, prior


class Reference:
    """The exact posterior by importance sampling from a Student-t proposal wider than the
    full-data Laplace approximation: mean, sd, k-hat, ESS and ``log Z_p``."""

    def __init__(self, laplace, X, y, n_draws, seed, dtype=np.float64):
        self.rows, self.family, self.prior = _model(laplace, X, y)
        q = laplace.posterior_
        t = stats.multivariate_t(loc=q.mean, shape=_WIDER**2 * q.cov, df=_T_DF)
        draws = t.rvs(size=n_draws, random_state=np.random.default_rng(seed))
        self.seconds, log_p = timed(lambda: self.log_p(draws, dtype))
        summary = importance_summary(draws, t.logpdf(draws), log_p)
        self.mean, self.sd = summary.mean, summary.sd
        self.pareto_k, self.ess = summary.pareto_k, summary.ess
        # delta method of the self-normalised variance: its relative se, halved for the sd
        w = np.exp(summary.log_weights)[:, None]
        dev2 = (draws - self.mean) ** 2
        self.sd_se = 0.5 * np.sqrt(np.sum(w**2 * (dev2 - self.sd**2) ** 2, axis=0)) / self.sd**2
        log_ratio = log_p - t.logpdf(draws)
        self.log_z = float(logsumexp(log_ratio) - np.log(n_draws))
        w = np.exp(log_ratio - logsumexp(log_ratio))  # delta method: sd(ratio) / mean / sqrt(S)
        self.log_z_se = float(np.sqrt(max(np.sum(w**2) - 1.0 / n_draws, 0.0)))

    def log_p(self, draws, dtype=np.float64):
        return log_joint(self.rows, self.family, draws, self.prior, True, dtype=dtype)

    def errors(self, mean, sd):
        """Largest |mean - reference mean| in reference sd, and the range of sd ratios."""
        ratio = sd / self.sd
        return float(np.max(np.abs(mean - self.mean) / self.sd)), ratio.min(), ratio.max()

    def gaussian_kl(self, posterior, n_draws, seed):
        """``(KL(q || p), se)`` of a Gaussian posterior with this reference's ``log Z_p``."""
        draws = posterior.sample(n_draws, random_state=seed)
        energy = posterior.logpdf(draws) - self.log_p(draws)
        se = np.sqrt(np.var(energy, ddof=1) / n_draws + self.log_z_se**2)
        return float(np.mean(energy) + self.log_z), float(se)


def _route(estimator, args, verbose=False):
    clf = estimator(method="mcmc", random_state=0,
                    **({} if args.n_draws is None else {"n_draws": args.n_draws}))
    return Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)), ("clf", clf)],
                    exact_correction=False, verbose=verbose)


def _fit_parts(pipe, X, y):
    """``(seconds, {step: seconds})`` of ``pipe.fit``: its steps' times as its verbose
    output gives them (the coreset is sized as in the pipeline, by the exact distance before
    MCMC, which a coreset fitted alone is not)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        seconds, _ = timed(lambda: pipe.fit(X, y))
    return seconds, {name: float(t) for name, t in
                     re.findall(r"fitting (\w+), total=([\d.]+)s", out.getvalue())}


def _draw_moments(draws):
    return draws.mean(axis=0), draws.std(axis=0)


def _row(name, seconds, result, ref, mean, sd, extra=""):
    err, low, high = ref.errors(mean, sd)
    kl = "-" if result is None else f"{result.kl:.4f} +- {result.kl_se:.4f}"
    k = "-" if result is None else f"{result.pareto_k:.2f}"
    print(f"| {name} | {seconds} | {kl} | {k} | {err:.3f} | {low:.3f}-{high:.3f} | {extra} |",
          flush=True)


def run_shape(key, n, args):
    title, estimator, make = SHAPES[key]
    X, y = make(n, random_state=0)
    print(f"\n### {title}, N = {n:.0e} ({int(np.sum(y > 0))} positive targets)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_laplace, laplace = timed(lambda: estimator().fit(X, y))
        ref = Reference(laplace, X, y, args.ref_draws, seed=12345,
                        dtype=_DTYPES[args.ref_dtype])
        t_prox, prox = timed(lambda: estimator(method="kl_proximal").fit(X, y))
        pipe = _route(estimator, args, verbose=True)
        t_route, parts = _fit_parts(pipe, X, y)
        t_coreset, rows = parts["coreset"], len(pipe[0].sample_indices_)
        t_kl_route, kl_route = timed(lambda: exact_kl(pipe, X, y, dtype="float32"))
        kls = {name: timed(lambda: exact_kl(fit, X, y, dtype="float32", random_state=1))
               for name, fit in (("laplace", laplace), ("prox", prox))}
        n_run = len(pipe[-1].posterior_samples_)
        n_corr = correction_draws(n, n_run)
        t_corr, corr = timed(lambda: exact_correction(pipe, X, y, random_state=0))
    print(f"reference: Student-t ({_T_DF} df, Laplace location, covariance x {_WIDER}^2), "
          f"{args.ref_draws} draws, k-hat {ref.pareto_k:.2f}, ESS {ref.ess:.0f} "
          f"(mean se {1 / np.sqrt(ref.ess):.3f} sd), {ref.seconds:.0f} s\n")
    print("| route | time (s) | exact_kl to exact (nats) | k-hat | max mean err vs ref (sd) | "
          "sd ratio vs ref | notes |")
    print("|---|---|---|---|---|---|---|")
    for name, fit, seconds in (("Laplace, all rows", laplace, t_laplace),
                               ("KL-proximal, all rows", prox, t_prox)):
        t_kl, result = kls["laplace" if fit is laplace else "prox"]
        check, check_se = ref.gaussian_kl(fit.posterior_, args.check_draws, seed=7)
        post = fit.posterior_
        _row(name, f"{seconds:.1f} (+ exact_kl {t_kl:.1f})", result, ref, post.mean,
             np.sqrt(np.diag(post.cov)),
             f"independent KL {check:.4f} +- {check_se:.4f} (ratio {result.kl / check:.2f})")
    mean, sd = _draw_moments(pipe[-1].posterior_samples_)
    _row(f"QuasiNewtonCoreset() + NUTS ({rows} rows, {n_run} draws)",
         f"{t_route:.1f} = coreset {t_coreset:.1f} + NUTS {t_route - t_coreset:.1f} "
         f"(+ exact_kl {t_kl_route:.1f})", kl_route, ref, mean, sd, "uncorrected")
    mean, sd = _draw_moments(corr.draws)
    _row(f"... + exact correction ({n_corr} draws, float32)",
         f"{t_route + t_corr:.1f} = route + correction {t_corr:.1f}", None, ref, mean, sd,
         f"k-hat {corr.pareto_k:.2f}, ESS {corr.ess:.0f}, KL before {corr.kl:.4f}; "
         f"mean se {1 / np.sqrt(corr.ess):.3f} sd")
    if key == "rare":
        _correction_variants(pipe, X, y, ref, n_run)
        if args.nuts_n:
            _nuts_extrapolation(laplace, X, y, args, t_route + t_corr)


def _correction_variants(pipe, X, y, ref, n_run):
    """The correction as it was (every draw, float64), thinned in float64, and the float32
    pass's error at the same draws."""
    print("\nThe correction's pass, variants (same fitted route):\n")
    print("| variant | seconds | k-hat | ESS | KL before | max mean err vs ref (sd) | "
          "sd ratio vs ref |")
    print("|---|---|---|---|---|---|---|")
    for label, n_draws, dtype in ((f"all {n_run} draws, float64 (before)", n_run, np.float64),
                                  ("1000 draws, float64", 1000, np.float64),
                                  ("1000 draws, float32 (default)", 1000, np.float32),
                                  ("500 draws, float32", 500, np.float32)):
        seconds, corr = timed(lambda: exact_correction(pipe, X, y, n_draws=n_draws,
                                                       dtype=dtype, random_state=0))
        err, low, high = ref.errors(*_draw_moments(corr.draws))
        print(f"| {label} | {seconds:.1f} | {corr.pareto_k:.2f} | {corr.ess:.0f} | "
              f"{corr.kl:.4f} | {err:.3f} | {low:.3f}-{high:.3f} |", flush=True)
    draws = pipe[-1].posterior_samples_[:: max(1, n_run // 1000)][:1000]
    gap = ref.log_p(draws, np.float32) - ref.log_p(draws, np.float64)
    print(f"\nfloat32 - float64 log p~ at 1,000 draws: max |difference| {np.max(np.abs(gap)):.2e}"
          f" nats (spread of log p~ over the draws {np.ptp(ref.log_p(draws)):.1f} nats)")


def _nuts_extrapolation(laplace, X, y, args, certified_seconds):
    """NumPyro on ``--nuts-n`` rows (its steps per draw and time), one gradient at N rows,
    and the extrapolated time of NUTS on all N rows."""
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS
    from numpyro.infer.util import initialize_model

    from _nuts import _glm

    jax.config.update("jax_enable_x64", True)
    n_small = int(args.nuts_n)
    Xs, ys = X[:n_small], y[:n_small]
    small = BayesianLogisticRegression().fit(Xs, ys)
    model_args = ("logistic", laplace.prior_scale, laplace.intercept_prior_scale)
    start = small.posterior_.mean
    kernel = NUTS(_glm, dense_mass=True, inverse_mass_matrix=jnp.asarray(small.posterior_.cov),
                  adapt_mass_matrix=False)
    chain = MCMC(kernel, num_warmup=300, num_samples=1000, progress_bar=False)
    t_small = time.perf_counter()
    chain.run(jax.random.PRNGKey(0), jnp.asarray(Xs), jnp.asarray(ys, dtype=float),
              jnp.ones(n_small), *model_args, extra_fields=("num_steps",),
              init_params={"coef": jnp.asarray(start[:-1]), "intercept": jnp.asarray(start[-1])})
    t_small = time.perf_counter() - t_small
    steps = float(np.mean(chain.get_extra_fields()["num_steps"]))

    def gradient_seconds(Xg, yg):
        init = initialize_model(jax.random.PRNGKey(0), _glm, model_args=(
            jnp.asarray(Xg), jnp.asarray(yg, dtype=float), jnp.ones(len(yg)), *model_args))
        grad = jax.jit(jax.value_and_grad(init.potential_fn))
        params = init.param_info.z
        jax.block_until_ready(grad(params))  # compile
        best = np.inf
        for _ in range(5):
            t0 = time.perf_counter()
            jax.block_until_ready(grad(params))
            best = min(best, time.perf_counter() - t0)
        return best

    g_small, g_full = gradient_seconds(Xs, ys), gradient_seconds(X, y)
    total_steps = steps * 1300  # warm-up steps take about as many leapfrog steps
    extrapolated = total_steps * g_full
    print(f"\nNUTS on all rows (NumPyro, dense mass = Laplace covariance, 300 warm-up + 1,000 "
          f"draws): at N = {n_small:.0e} measured {t_small:.0f} s, {steps:.1f} leapfrog "
          f"steps per draw, gradient {g_small * 1e3:.1f} ms (steps x 1,300 x gradient = "
          f"{total_steps * g_small:.0f} s). At N = {len(y):.0e}: one gradient "
          f"{g_full * 1e3:.0f} ms, so **extrapolated** {extrapolated:.0f} s (not run). "
          f"Certified route (coreset + NUTS + correction) {certified_seconds:.1f} s: "
          f"{extrapolated / certified_seconds:.0f}x faster than the extrapolated run.")


def _mc_se(ess, ref):
    """Combined Monte Carlo standard error, in reference sd, of each mean difference."""
    return np.sqrt(1.0 / np.asarray(ess, dtype=float) + 1.0 / ref.ess)


def _mc_row(name, ref, draws, ess, n_sd, notes):
    """``n_sd``: the draws' worth for their sd (squared deviations' effective count)."""
    mean, sd = _draw_moments(draws)
    diff = np.abs(mean - ref.mean) / ref.sd
    se = np.broadcast_to(_mc_se(ess, ref), diff.shape)
    j = int(np.argmax(diff))
    ratio = sd / ref.sd
    dev2 = (draws - mean) ** 2
    sd_se = np.hypot(0.5 * np.std(dev2, axis=0) / sd**2 / np.sqrt(n_sd), ref.sd_se)
    k = int(np.argmax(np.abs(ratio - 1)))
    last = len(mean) - 1
    print(f"| {name} | {diff[j]:.3f} +- {se[j]:.3f} ({diff[j] / se[j]:.1f} se; "
          f"{'intercept' if j == last else f'coef {j}'}) | {np.max(diff / se):.1f} | "
          f"{ratio.min():.3f}-{ratio.max():.3f} | {abs(ratio[k] - 1) * 100:.1f} % +- "
          f"{sd_se[k] * 100:.1f} % ({abs(ratio[k] - 1) / sd_se[k]:.1f} se; "
          f"{'intercept' if k == last else f'coef {k}'}) | "
          f"{np.max(np.abs(ratio - 1) / sd_se):.1f} | {notes} |", flush=True)


def run_mc_check(key, n, args):
    """The corrected and uncorrected routes against the reference, with enough draws on
    both sides to resolve 0.05 sd."""
    title, estimator, make = SHAPES[key]
    X, y = make(n, random_state=0)
    print(f"\n### {title}, N = {n:.0e} ({int(np.sum(y > 0))} positive targets)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        laplace = estimator().fit(X, y)
        ref = Reference(laplace, X, y, args.ref_draws, seed=args.ref_seed,
                        dtype=_DTYPES[args.ref_dtype])
        pipe = _route(estimator, args, verbose=True)
        t_route, parts = _fit_parts(pipe, X, y)
        clf = pipe[-1]
        n_run = len(clf.posterior_samples_)
        n_corr = (correction_draws(n, n_run) if args.correction_draws is None
                  else min(args.correction_draws, n_run))
        t_corr, corr = timed(lambda: exact_correction(pipe, X, y, n_draws=n_corr,
                                                      random_state=0))
    ess_run = np.asarray(clf.effective_sample_size_, dtype=float)
    print(f"reference: Student-t ({_T_DF} df, Laplace location, covariance x {_WIDER}^2), "
          f"{args.ref_draws} draws, {args.ref_dtype} pass, k-hat {ref.pareto_k:.2f}, ESS "
          f"{ref.ess:.0f} (mean se {1 / np.sqrt(ref.ess):.4f} sd), {ref.seconds:.0f} s\n")
    print(f"route: {len(pipe[0].sample_indices_)} coreset rows (exact_kl_estimate_ "
          f"{pipe[0].exact_kl_estimate_}), NUTS n_draws={clf.n_draws}: {n_run} draws, ESS "
          f"per parameter {ess_run.min():.0f}-{ess_run.max():.0f}; fit {t_route:.1f} s "
          f"({parts}); correction of {n_corr} draws {t_corr:.1f} s\n")
    print("| route | largest mean diff (ref sd) +- combined MC se | largest diff / se | "
          "sd ratio vs ref | largest sd error +- combined se | largest sd error / se | "
          "notes |")
    print("|---|---|---|---|---|---|---|")
    _mc_row(f"uncorrected ({n_run} NUTS draws)", ref, clf.posterior_samples_, ess_run,
            n_run, f"NUTS ESS {ess_run.min():.0f}-{ess_run.max():.0f}")
    # the weighted draws are worth the importance ESS times the run's ESS per draw
    per_draw = ess_run / n_run
    _mc_row(f"corrected ({n_corr} draws weighted)", ref, corr.draws, corr.ess * per_draw,
            min(corr.ess, n_corr),
            f"k-hat {corr.pareto_k:.2f}, importance ESS {corr.ess:.0f}, KL before "
            f"{corr.kl:.4f}")
    if args.nuts_seeds > 1:
        _nuts_seeds(estimator, X, y, ref, clf.posterior_samples_, args)


def _nuts_seeds(estimator, X, y, ref, draws, args):
    """The route's own noise in its sds: the same coreset (seed 0) with NUTS seeded 1, 2...,
    the sd ratio to the reference of the parameter whose sd is furthest off at seed 0."""
    ratio = draws.std(axis=0) / ref.sd
    k = int(np.argmax(np.abs(ratio - 1)))
    ratios = [ratio[k]]
    for seed in range(1, args.nuts_seeds):
        pipe = _route(estimator, args)
        pipe.set_params(clf__random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(X, y)
        ratios.append(pipe[-1].posterior_samples_[:, k].std() / ref.sd[k])
    print(f"\nuncorrected sd / reference sd of parameter {k} for NUTS seeds 0-"
          f"{args.nuts_seeds - 1}: {' / '.join(f'{r:.3f}' for r in ratios)} (spread "
          f"{np.std(ratios, ddof=1) * 100:.1f} %)", flush=True)


def run_kl_only(key, n, args):
    """The uncorrected route's exact distance, rows and parts' times against full-data
    Laplace's, in one run."""
    title, estimator, make = SHAPES[key]
    X, y = make(n, random_state=0)
    print(f"\n### {title}, N = {n:.0e} ({int(np.sum(y > 0))} positive targets)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_laplace, laplace = timed(lambda: estimator().fit(X, y))
        t_kl_laplace, kl_laplace = timed(
            lambda: exact_kl(laplace, X, y, dtype="float32", random_state=1))
        pipe = _route(estimator, args, verbose=True)
        t_route, parts = _fit_parts(pipe, X, y)
        t_kl_route, kl_route = timed(lambda: exact_kl(pipe, X, y, dtype="float32"))
    coreset = pipe[0]
    print("| route | rows | time (s) | exact_kl (nats) | k-hat | ratio to Laplace |")
    print("|---|---|---|---|---|---|")
    print(f"| Laplace, all rows | {n} | {t_laplace:.1f} (+ exact_kl {t_kl_laplace:.1f}) | "
          f"{kl_laplace.kl:.4f} +- {kl_laplace.kl_se:.4f} | {kl_laplace.pareto_k:.2f} | 1 |")
    print(f"| QuasiNewtonCoreset() + NUTS, uncorrected | {len(coreset.sample_indices_)} | "
          f"{t_route:.1f} = coreset {parts.get('coreset', np.nan):.1f} + NUTS "
          f"{parts.get('clf', np.nan):.1f} (+ exact_kl {t_kl_route:.1f}) | "
          f"{kl_route.kl:.4f} +- {kl_route.kl_se:.4f} | {kl_route.pareto_k:.2f} | "
          f"{kl_laplace.kl / kl_route.kl:.1f}x closer |", flush=True)
    print(f"\ncoreset: distance_={coreset.distance_}, exact_kl_estimate_="
          f"{coreset.exact_kl_estimate_}, laplace_exact_kl_={coreset.laplace_exact_kl_}, "
          f"exact_pareto_k_={coreset.exact_pareto_k_}, stop_reason_={coreset.stop_reason_}"
          f"\nexact_kl_path_ (rows, estimate, k-hat):\n{coreset.exact_kl_path_}")


def run_honesty(n):
    """k-hat above 0.7 must warn: the rare-events routes at a small N, where the full-data
    Laplace fit is a poor proposal, with the warnings ``exact_kl`` and the correction
    issued."""
    X, y = SHAPES["rare"][2](n, random_state=0)
    laplace = BayesianLogisticRegression().fit(X, y)
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(random_state=0)),
                     ("clf", BayesianLogisticRegression(method="mcmc", random_state=0))],
                    exact_correction=True)
    print(f"\n### k-hat honesty: rare events, N = {n:.0e} ({int(np.sum(y > 0))} positives)\n")
    print("| fit | k-hat | reliable | warning |")
    print("|---|---|---|---|")
    for name, run in (("Laplace, all rows: exact_kl",
                       lambda: exact_kl(laplace, X, y, dtype="float32", random_state=1)),
                      ("coreset + NUTS: Pipeline(exact_correction=True)",
                       lambda: pipe.fit(X, y))):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = run()
        k = out.pareto_k if name.startswith("Laplace") else out.pareto_k_
        reliable = out.reliable if name.startswith("Laplace") else out.exact_corrected_
        said = [str(w.message)[:90] for w in caught if "k-hat" in str(w.message)]
        print(f"| {name} | {k:.2f} | {reliable} | {said[0] + '...' if said else 'none'} |",
              flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--ref-draws", type=int, default=16000)
    parser.add_argument("--check-draws", type=int, default=4000)
    parser.add_argument("--nuts-n", type=float, default=1e5,
                        help="rows of the NumPyro run on rare events (0: skip)")
    parser.add_argument("--honesty-n", type=float, nargs="*", default=[],
                        help="also run the k-hat honesty check (rare events) at these N")
    parser.add_argument("--n-draws", type=int, default=None,
                        help="the MCMC estimator's n_draws (effective draws; default its own)")
    parser.add_argument("--correction-draws", type=int, default=None,
                        help="draws the correction weights (default the pipeline's budget)")
    parser.add_argument("--ref-seed", type=int, default=12345,
                        help="seed of the reference's draws (--mc-check)")
    parser.add_argument("--nuts-seeds", type=int, default=1,
                        help="--mc-check: refit NUTS with this many seeds for its sd noise")
    parser.add_argument("--ref-dtype", default="float64", choices=list(_DTYPES),
                        help="precision of the reference's pass over the rows")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--mc-check", action="store_true",
                      help="only the routes' moments against the reference, with their "
                      "Monte Carlo errors")
    mode.add_argument("--kl-only", action="store_true",
                      help="only exact_kl of the uncorrected route and of Laplace")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    run = run_mc_check if args.mc_check else run_kl_only if args.kl_only else run_shape
    for key in args.shapes:
        run(key, int(args.n), args)
    for n in args.honesty_n:
        run_honesty(int(n))
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    with threadpool_limits(limits=1):
        main()
