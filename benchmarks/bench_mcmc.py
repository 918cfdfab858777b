"""MCMC kernels: NUTS (the default) against emcee's ensemble, and NumPyro NUTS on all rows.

Run by hand: ``python benchmarks/bench_mcmc.py [--quick] [--d 10 30 50 100]
[--full N:d ...] [--route-M 1000 auto] [--no-all-rows] [--no-numpyro] [--fresh]
[--reference-draws S]``. One thread for BLAS and XLA.

Data: logistic regression with AR(0.6)-correlated standard normal features (``corr(x_j,
x_k) = 0.6^|j-k|``, as real covariates often are), coefficients of norm 2, intercept -1
(about 30% positives).

**Coreset table** (``--d``): for each d, a ``QuasiNewtonCoreset(M=1000)`` of N = 1e5 rows;
on its 1,000 weighted rows, ``BayesianLogisticRegression(method="mcmc")`` with the ensemble
sampler (emcee, its default run) and with NUTS (the default: 4 chains to a bulk ESS of
4,000), each timed end to end (Laplace start included). "min bulk ESS" is the same
estimator for both, the bulk ESS of Vehtari et al. (2021) of the draws returned, over the
NUTS chains or the emcee walkers ("n/a" when they are too short for it: fewer than 20 draws
per walker; the estimator's own ``effective_sample_size_`` is in the note, for emcee the
autocorrelation-time estimate, which a chain shorter than 50 autocorrelation times
overstates); min ESS / s is effective draws per second of fit. "mean-error ESS" is read
from the errors of the posterior means against the reference, ``p / sum_j z_j^2`` with
``z_j`` the error of mean j in reference sd: an average over the parameters that needs no
autocorrelation estimate and counts a chain that has not converged for what it is.
Quality against the coreset posterior itself: KL(moment-matched draws || reference) in nats
and the largest mean error in reference sd.

**All-rows table** (``--full N:d``, default ``1e5:10 1e5:30 1e6:30``): MCMC on all N rows,
the baseline a user without a coreset would run. The package's NUTS (the same kernel, the
gradient one blocked pass over the rows) and, when installed, NumPyro's NUTS (4 chains,
dense mass matrix, 500 warm-up and 1,000 draws each, JIT compilation included, started at
0), run alternately; emcee's default run extrapolated from the time of one ensemble step on
all rows (hours). Then the coreset route: ``QuasiNewtonCoreset(M=M)`` for each ``--route-M``
(default 1000; ``auto`` is the constructor's default, sized by ``target_kl=0.1``, and
``auto:0.01`` sets ``target_kl``) plus NUTS on its rows, timed end to end. Quality against
the full-data posterior; the note of each coreset row also gives the coreset's own error
without the draws' Monte Carlo error, KL(coreset Laplace || full Laplace) and its largest
mean error (``skcoreset.metrics.coreset_quality``). The all-rows NUTS runs (about 700
CPU seconds for the package's kernel at N = 1e6, d = 30) are cached: their draws and seconds go to
``benchmarks/results/mcmc_all_rows_<run>_<N>_<d>.npz`` and are read back by later runs
(the row says "cached"), so a changed coreset is measured against the same all-rows run;
``--fresh`` reruns them. The data and the reference are deterministic (fixed seeds). The
notes give each run's CPU time besides its wall time, and the speed-ups in both: on a
shared machine the CPU time of a one-thread run is what other jobs do not inflate.
``--no-all-rows`` skips the all-rows kernels (NUTS and emcee) altogether.

**Reference posteriors**: self-normalized importance sampling from a Student-t (10 degrees
of freedom) centred at the Laplace approximation, with the exact log posterior on every row
(``--reference-draws``, default 40,000 on coresets and 10,000 on all rows; the Kish
effective sample size is printed). Independent of both MCMC kernels. The Monte Carlo error
of a moment-matched Gaussian of ESS draws adds about ``p (p + 3) / (4 ESS)`` nats to every
KL here (0.07 nats at p = 31 and ESS 4,000), the same for runs of the same ESS.

Targets: on the coreset, NUTS min ESS / s
>= 5x emcee's at d = 30 and >= 20x at d = 100, and NUTS's default run reaches min bulk ESS
>= 1000 with R-hat <= 1.01 at d = 100 without a warning; at N = 1e6, d = 30, coreset + NUTS
>= 30x faster than NUTS on all rows with KL to the reference within 0.05 nats of it.
"""

import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from scipy.special import expit, log_expit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from _common import results_dir, timed  # noqa: E402
from skcoreset import (BayesianLogisticRegression, GaussianPosterior,  # noqa: E402
                       QuasiNewtonCoreset)
from skcoreset._inference import prior_precision  # noqa: E402
from skcoreset._inference.diagnostics import (bulk_effective_sample_size,  # noqa: E402
                                              rank_r_hat)
from skcoreset._inference.mcmc import _chain_plan, log_probability  # noqa: E402
from skcoreset.exceptions import MCMCDiagnosticWarning  # noqa: E402
from skcoreset.families import LogisticFamily  # noqa: E402
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl  # noqa: E402

RHO = 0.6
M = 1000
PRIOR = dict(prior_scale=1.0, intercept_prior_scale=10.0)
ROW_BLOCK = 32_768  # rows per block of the reference's log posteriors


def make_data(n, d, seed=0):
    """AR(0.6)-correlated features, logistic labels (coefficients of norm 2, intercept -1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    for j in range(1, d):  # in place: x_j = rho x_{j-1} + sqrt(1 - rho^2) e_j
        X[:, j] *= np.sqrt(1 - RHO**2)
        X[:, j] += RHO * X[:, j - 1]
    coef = rng.normal(size=d)
    coef *= 2.0 / np.linalg.norm(coef)
    y = (rng.random(n) < expit(X @ coef - 1.0)).astype(int)
    return X, y


def reference(X, y, w, n_draws, seed=0, df=10.0):
    """Importance-sampling reference of the weighted posterior: (GaussianPosterior of its
    moments, Kish ESS). Proposal: Student-t with ``df`` degrees of freedom at the Laplace
    mode and covariance; the exact log posterior of every row, in row blocks."""
    start = BayesianLogisticRegression(**PRIOR).fit(X, y, sample_weight=w).posterior_
    p = len(start.mean)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n_draws, p))
    scale = np.sqrt(rng.chisquare(df, n_draws) / df)
    theta = start.mean + (z / scale[:, None]) @ start.cov_cholesky.T
    # log t density up to a constant: -(df + p) / 2 log(1 + |z / scale|^2 / df)
    log_q = -0.5 * (df + p) * np.log1p(np.sum((z / scale[:, None]) ** 2, axis=1) / df)
    prior = prior_precision(X.shape[1], fit_intercept=True, **PRIOR)
    y_enc = np.where(y == 1, 1.0, -1.0)
    log_p = -0.5 * np.sum(prior * theta**2, axis=1)
    for start_row in range(0, len(y), ROW_BLOCK):
        rows = slice(start_row, start_row + ROW_BLOCK)
        eta = X[rows] @ theta[:, :-1].T + theta[:, -1]
        log_p += w[rows] @ log_expit(y_enc[rows, None] * eta)
    log_w = log_p - log_q
    weights = np.exp(log_w - log_w.max())
    weights /= weights.sum()
    mean = weights @ theta
    centred = theta - mean
    cov = (centred * weights[:, None]).T @ centred
    return GaussianPosterior(mean, cov), 1.0 / np.sum(weights**2)


def quality(posterior, ref):
    """(KL(moment-matched || reference) nats, largest mean error in reference sd)."""
    return posterior_kl(posterior, ref), mean_error_sd(posterior, ref)


def clocked(fn):
    """``(wall seconds, CPU seconds of this process, fn())``: on a shared machine the CPU
    time of a one-thread run is the part of its wall time that other jobs do not inflate."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def fit_mcmc(X, y, w, **params):
    """Timed fit; (seconds, CPU seconds, estimator, the MCMC warnings it raised)."""
    est = BayesianLogisticRegression(method="mcmc", random_state=0, **PRIOR, **params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seconds, cpu, _ = clocked(lambda: est.fit(X, y, sample_weight=w))
    return seconds, cpu, est, [str(c.message) for c in caught
                               if issubclass(c.category, MCMCDiagnosticWarning)]


def chains_of(est):
    """An MCMC fit's kept draws as (n_steps, n_chains, p): NUTS chains or emcee walkers
    (both are stored step by step)."""
    p = est.posterior_samples_.shape[1]
    n_chains = est.sample_stats_["lp"].shape[0] if hasattr(est, "sample_stats_") else (
        max(16, 4 * p))
    steps = len(est.posterior_samples_) // n_chains
    return est.posterior_samples_[len(est.posterior_samples_) - steps * n_chains:].reshape(
        steps, n_chains, p)


# chains shorter than this (per half) give no bulk ESS worth printing (emcee's default run
# keeps 4000 draws over 404 walkers at d = 100: 9 per walker)
MIN_HALF_CHAIN = 10


def error_ess(posterior, ref):
    """Effective sample size read from the errors of the posterior means:
    ``p / sum_j ((mean_j - ref_j) / sd_j)^2`` -- the number of independent draws whose
    means would be that far off on average over the parameters (each squared standardized
    error is about chi^2_1 / ESS). Any sampler, converged or not, and independent of the
    chains' autocorrelation estimates; the reference's own error makes it an underestimate
    when it approaches the reference's Kish ESS."""
    z = (posterior.mean - ref.mean) / np.sqrt(np.diag(ref.cov))
    return len(z) / np.sum(z**2)


def row(label, seconds, est_or_draws, ref, extra=""):
    """Print a table row: seconds, bulk ESS (the same estimator for every sampler: Vehtari
    et al. 2021 over the chains or walkers) and its rate, the mean-error ESS and its rate,
    R-hat, quality; return (bulk ESS rate, mean-error ESS rate, KL)."""
    draws = chains_of(est_or_draws) if hasattr(est_or_draws, "posterior_") else est_or_draws
    ess = bulk_effective_sample_size(draws).min()
    if draws.shape[0] < 2 * MIN_HALF_CHAIN:
        ess = np.nan
    r_hat = rank_r_hat(draws).max()
    flat = draws.reshape(-1, draws.shape[2])
    posterior = GaussianPosterior(flat.mean(axis=0), np.cov(flat, rowvar=False))
    kl, sd = quality(posterior, ref)
    from_error = error_ess(posterior, ref)
    bulk = "n/a | n/a" if np.isnan(ess) else f"{ess:.0f} | {ess / seconds:.0f}"
    print(f"| {label} | {seconds:.1f} | {bulk} | {from_error:.0f} | "
          f"{from_error / seconds:.0f} | {r_hat:.3f} | {kl:.3f} | {sd:.3f} |{extra}",
          flush=True)
    return ess / seconds, from_error / seconds, kl


def coreset_of(X, y, size=M, target_kl=0.1):
    """(seconds, CPU seconds, rows, targets, weights, fitted QuasiNewtonCoreset)."""
    coreset = QuasiNewtonCoreset(M=size, target_kl=target_kl, model="logistic",
                                 random_state=0, **PRIOR)
    seconds, cpu, (Xc, yc, wc) = clocked(lambda: coreset.fit_coreset(X, y))
    return seconds, cpu, Xc, yc, wc, coreset


def coreset_table(dims, n, reference_draws):
    print(f"\n### On a QuasiNewtonCoreset(M={M}) of N = {n:.0e} rows (AR({RHO}) features)\n")
    print("| d | sampler | seconds | min bulk ESS | min ESS / s | mean-error ESS | per s | "
          "max R-hat | KL to reference (nats) | max mean error (sd) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for d in dims:
        X, y = make_data(n, d, seed=d)
        build, _, Xc, yc, wc, _ = coreset_of(X, y)
        ref, kish = reference(Xc, yc, wc, reference_draws)
        ensemble = fit_mcmc(Xc, yc, wc, sampler="ensemble")
        nuts = fit_mcmc(Xc, yc, wc)
        rates = {}
        for name, (seconds, _, est, warned) in (("emcee", ensemble), ("NUTS", nuts)):
            note = (f" reports ESS {est.effective_sample_size_.min():.0f}"
                    + (f"; {len(warned)} warning(s): {warned[0][:60]}..." if warned else ""))
            rates[name] = row(f"{d} | {name}", seconds, est, ref, extra=note)[:2]
        bulk, error = (rates["NUTS"][k] / rates["emcee"][k] for k in (0, 1))
        bulk = "n/a" if np.isnan(bulk) else f"**{bulk:.1f}x**"
        print(f"|   | NUTS / emcee | | | {bulk} | | **{error:.1f}x** | | | | (coreset built in "
              f"{build:.1f} s, {len(wc)} rows; reference Kish ESS {kish:.0f})", flush=True)


def emcee_seconds(X, y, n_timed=2):
    """Extrapolated time of emcee's default run on all rows: one vectorised log-posterior
    evaluation of the whole ensemble, times the planned steps (a Laplace fit added)."""
    p = X.shape[1] + 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_walkers, per_walker, thin, n_burnin = _chain_plan(p, None, 4000, None, None)
    log_post = log_probability(X, np.where(y == 1, 1.0, -1.0), LogisticFamily(),
                               sample_weight=np.ones(len(y)),
                               prior_prec=prior_precision(X.shape[1], fit_intercept=True,
                                                          **PRIOR), fit_intercept=True)
    walkers = 0.01 * np.random.default_rng(0).normal(size=(n_walkers, p))
    seconds, _ = timed(lambda: [log_post(walkers) for _ in range(n_timed)])
    laplace, _ = timed(lambda: BayesianLogisticRegression(**PRIOR).fit(X, y))
    steps = n_burnin + thin * per_walker
    return laplace + steps * seconds / n_timed, steps, n_walkers


def numpyro_nuts(X, y, n_warmup=500, n_samples=1000, n_chains=4):
    """NumPyro NUTS on all rows: (seconds, CPU seconds, (n_samples, n_chains, p) draws,
    divergences)."""
    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    jax.config.update("jax_enable_x64", True)
    Xj, yj = jnp.asarray(X), jnp.asarray(np.where(y == 1, 1.0, -1.0))
    prior = jnp.asarray(prior_precision(X.shape[1], fit_intercept=True, **PRIOR))

    def potential(theta):
        eta = Xj @ theta[:-1] + theta[-1]
        return -jnp.sum(jax.nn.log_sigmoid(yj * eta)) + 0.5 * jnp.sum(prior * theta**2)

    def run():
        mcmc = MCMC(NUTS(potential_fn=potential, dense_mass=True), num_warmup=n_warmup,
                    num_samples=n_samples, num_chains=n_chains, chain_method="sequential",
                    progress_bar=False)
        mcmc.run(jax.random.PRNGKey(0), init_params=jnp.zeros((n_chains, X.shape[1] + 1)),
                 extra_fields=("diverging",))
        return mcmc

    seconds, cpu, mcmc = clocked(run)
    draws = np.asarray(mcmc.get_samples(group_by_chain=True)).transpose(1, 0, 2)
    return seconds, cpu, draws, int(np.sum(mcmc.get_extra_fields()["diverging"]))


def all_rows_run(run, X, y, fresh=False):
    """(seconds, CPU seconds, (n_steps, n_chains, p) draws, note) of an all-rows NUTS run:
    ``"ours"`` (the package's, what ``method="mcmc"`` runs) or ``"numpyro"``; read from /
    written to ``benchmarks/results/mcmc_all_rows_<run>_<N>_<d>.npz`` unless ``fresh``."""
    path = results_dir() / f"mcmc_all_rows_{run}_{len(y):.0e}_{X.shape[1]}.npz"
    if path.exists() and not fresh:
        cached = np.load(path)
        return (float(cached["seconds"]), float(cached["cpu"]), cached["draws"],
                f" cached: {cached['note']}")
    if run == "ours":
        seconds, cpu, est, warned = fit_mcmc(X, y, np.ones(len(y)))
        draws, note = chains_of(est), f" {len(warned)} warning(s)" if warned else ""
    else:
        seconds, cpu, draws, divergent = numpyro_nuts(X, y)
        note = f" {divergent} divergences"
    note = f" CPU {cpu:.0f} s;{note or ' no warnings'}"
    np.savez(path, seconds=seconds, cpu=cpu, draws=draws, note=note.strip())
    return seconds, cpu, draws, note


def full_table(settings, reference_draws, with_numpyro, route_sizes=((M, 0.1),),
               all_rows=True, fresh=False):
    print("\n### MCMC on all rows against the coreset route (AR(0.6) features)\n")
    print("| N, d | run | seconds | min bulk ESS | min ESS / s | mean-error ESS | per s | "
          "max R-hat | KL to reference (nats) | max mean error (sd) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    names = {"ours": "NUTS on all rows (skcoreset)", "numpyro": "NUTS on all rows (NumPyro)"}
    for k, (n, d) in enumerate(settings):
        X, y = make_data(n, d, seed=100 + d)
        ref, kish = reference(X, y, np.ones(n), reference_draws)
        full_laplace = BayesianLogisticRegression(**PRIOR).fit(X, y).posterior_
        label = f"{n:.0e}, {d}"
        runs = (["ours", "numpyro"] if with_numpyro else ["ours"]) if all_rows else []
        if k % 2:
            runs.reverse()  # alternate the order between settings
        results = {}
        for run in runs:
            seconds, cpu, draws, note = all_rows_run(run, X, y, fresh)
            kl = row(f"{label} | {names[run]}", seconds, draws, ref, extra=note)[2]
            results[run] = (seconds, cpu, kl)
        if all_rows:
            emcee, steps, walkers = emcee_seconds(X, y)
            print(f"| {label} | emcee on all rows, default run ({walkers} walkers x {steps} "
                  f"steps), extrapolated | {emcee:.0f} | | | | | | | |", flush=True)
        for size, target_kl in route_sizes:
            build, build_cpu, Xc, yc, wc, coreset = coreset_of(X, y, size, target_kl)
            seconds, cpu, est, warned = fit_mcmc(Xc, yc, wc)
            total, total_cpu = build + seconds, build_cpu + cpu
            # the coreset's own error, free of the draws' Monte Carlo error
            own = coreset_quality(coreset, X, y, full_posterior=full_laplace)
            note = (f" CPU {total_cpu:.1f} s; Laplace KL {own.kl:.3g} nats, "
                    f"{own.max_mean_error_sd:.3f} sd")
            note += f"; {len(warned)} warning(s)" if warned else ""
            setting = f"M={size!r}" + (f", target_kl={target_kl:g}" if size == "auto" else "")
            kl = row(f"{label} | QuasiNewtonCoreset({setting}) + NUTS ({len(wc)} rows, "
                     f"kl_estimate_ {coreset.kl_estimate_:.3g}, build {build:.1f} s)", total,
                     est, ref, extra=note)[2]
            summary = ", ".join(
                f"**{seconds_all / total:.0f}x** faster than {run} ({cpu_all / total_cpu:.0f}x "
                f"in CPU time), KL {kl - kl_all:+.3f} nats"
                for run, (seconds_all, cpu_all, kl_all) in results.items())
            print(f"|   | coreset route: {summary or 'no all-rows run'} | | | | | | | | | "
                  f"(reference Kish ESS {kish:.0f})", flush=True)


def nb_data(n, d=2, alpha=0.5, seed=0):
    """Negative binomial counts: standard normal features, coefficients ``0.5, -0.3, ...``,
    intercept 0.5, overdispersion ``alpha``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    mu = np.exp(0.5 + X @ np.linspace(0.5, -0.3, d))
    r = 1.0 / alpha
    return X, rng.negative_binomial(r, r / (r + mu)).astype(float)


def numpyro_same_run(family, X, y, start, chol, n_warmup, n_samples, n_chains=4, seed=0):
    """NumPyro's NUTS with the package's settings: the same model and prior, the inverse mass
    matrix the package's metric (the Laplace covariance, ``chol chol^T``, not adapted), the
    chains started at the same kind of Laplace draws, ``n_warmup`` iterations of step-size
    adaptation to an acceptance of 0.8, ``n_samples`` draws per chain, maximum tree depth
    10. ``(seconds, CPU seconds, compile seconds, (n_samples, n_chains, p) draws,
    divergences, gradients of the draws)``; the compile time (CPU seconds of a run of 2 + 2
    iterations, which compiles again) is included in the seconds."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import gammaln
    from numpyro.infer import MCMC, NUTS

    jax.config.update("jax_enable_x64", True)
    Xj = jnp.asarray(X)
    if family == "logistic":
        yj = jnp.asarray(np.where(y == 1, 1.0, -1.0))
        prior = jnp.asarray(prior_precision(X.shape[1], fit_intercept=True, **PRIOR))

        def potential(phi):
            eta = Xj @ phi[:-1] + phi[-1]
            return -jnp.sum(jax.nn.log_sigmoid(yj * eta)) + 0.5 * jnp.sum(prior * phi**2)
    else:  # negative binomial, [coef..., intercept, log alpha], log alpha ~ N(0, 10^2)
        yj = jnp.asarray(y)
        prior = jnp.asarray(prior_precision(X.shape[1], fit_intercept=True, **PRIOR))
        constant = -jnp.sum(gammaln(yj + 1.0))

        def potential(phi):
            theta, rho = phi[:-1], phi[-1]
            r = jnp.exp(-rho)
            u = Xj @ theta[:-1] + theta[-1] + rho  # eta - log r
            loglik = (jnp.sum(gammaln(yj + r)) - yj.size * gammaln(r) + constant
                      + jnp.sum(yj * jax.nn.log_sigmoid(u) + r * jax.nn.log_sigmoid(-u)))
            return -loglik + 0.5 * jnp.sum(prior * theta**2) + 0.5 * (rho / 10.0) ** 2

    rng = np.random.default_rng(seed)
    init = start + rng.standard_normal((n_chains, len(start))) @ chol.T
    kernel = NUTS(potential_fn=potential, dense_mass=True,
                  inverse_mass_matrix=jnp.asarray(chol @ chol.T), adapt_mass_matrix=False,
                  target_accept_prob=0.8, max_tree_depth=10)

    def run(warmup, samples):
        mcmc = MCMC(kernel, num_warmup=warmup, num_samples=samples, num_chains=n_chains,
                    chain_method="sequential", progress_bar=False)
        mcmc.run(jax.random.PRNGKey(seed), init_params=jnp.asarray(init),
                 extra_fields=("diverging", "num_steps"))
        return mcmc

    seconds, cpu, mcmc = clocked(lambda: run(n_warmup, n_samples))
    _, compile_cpu, _ = clocked(lambda: run(2, 2))
    draws = np.asarray(mcmc.get_samples(group_by_chain=True)).transpose(1, 0, 2)
    extra = mcmc.get_extra_fields()
    return (seconds, cpu, compile_cpu, draws, int(np.sum(extra["diverging"])),
            int(np.sum(extra["num_steps"])))


def same_settings_table(cases):
    """NUTS on all rows, the package's and NumPyro's with the same settings (see
    :func:`numpyro_same_run`): the package's run to its default target (4 chains, bulk ESS
    4,000, 150 warm-up iterations), NumPyro's for as many warm-up iterations and draws per
    chain."""
    from skcoreset import BayesianNegativeBinomialRegression
    from skcoreset._inference._start import mcmc_start
    from skcoreset._inference.dispersion import DispersionLogPosterior
    from skcoreset.families import NegativeBinomialFamily

    print("\n### NUTS on all rows with the same settings (one thread each)\n")
    print("| family, N, d | run | seconds (CPU) | draws per chain | gradients | ms per "
          "gradient | min bulk ESS | min ESS / s | max R-hat | divergences |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for family, n, d in cases:
        label = f"{family}, {n:.0e}, {d}"
        if family == "logistic":
            X, y = make_data(n, d, seed=100 + d)
            est = BayesianLogisticRegression(method="mcmc", random_state=0, **PRIOR)
        else:
            X, y = nb_data(n, d)
            est = BayesianNegativeBinomialRegression(method="mcmc", random_state=0, **PRIOR)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            seconds, cpu, _ = clocked(lambda: est.fit(X, y))
        draws = chains_of(est)
        if family != "logistic":  # log alpha, sampled with the coefficients
            log_alpha = np.log(est.alpha_samples_)[-draws.shape[0] * draws.shape[1]:]
            draws = np.concatenate([draws, log_alpha.reshape(draws.shape[0], -1, 1)], axis=2)
        warned = [str(c.message)[:50] for c in caught
                  if issubclass(c.category, MCMCDiagnosticWarning)]
        ess = bulk_effective_sample_size(draws).min()
        per_chain, n_grad = draws.shape[0], est.n_gradients_
        print(f"| {label} | skcoreset | {seconds:.1f} ({cpu:.1f}) | {per_chain} | {n_grad} | "
              f"{1e3 * cpu / n_grad:.2f} | {ess:.0f} | {ess / seconds:.1f} | "
              f"{rank_r_hat(draws).max():.3f} | {est.n_divergences_} |"
              + (f" {len(warned)} warning(s): {warned[0]}..." if warned else ""), flush=True)
        # NumPyro: the package's start and metric, computed as the package does
        prior = prior_precision(d, fit_intercept=True, **PRIOR)
        if family == "logistic":
            y_enc = np.where(y == 1, 1.0, -1.0)
            start = mcmc_start(X, y_enc, LogisticFamily(), sample_weight=np.ones(n),
                               prior_prec=prior, fit_intercept=True, tol=1e-10,
                               max_iter=100).posterior
            mode, chol = start.mean, start.cov_cholesky
        else:
            fixed = NegativeBinomialFamily(alpha=est.family_.alpha)
            start = mcmc_start(X, y, fixed, sample_weight=np.ones(n), prior_prec=prior,
                               fit_intercept=True, tol=1e-10, max_iter=100).posterior
            joint = DispersionLogPosterior(X, y, fixed, np.ones(n), prior, True)
            mode, chol = joint.joint_laplace(start.mean, start.precision,
                                             np.log(fixed.alpha))
        seconds, cpu, compiled, draws, divergent, n_grad = numpyro_same_run(
            family, X, y, mode, chol, 150, per_chain)
        ess = bulk_effective_sample_size(draws).min()
        print(f"| {label} | NumPyro | {seconds:.1f} ({cpu:.1f}) | {per_chain} | {n_grad} | "
              f"{1e3 * (cpu - compiled) / n_grad:.2f} | {ess:.0f} | {ess / seconds:.1f} | "
              f"{rank_r_hat(draws).max():.3f} | {divergent} | compile {compiled:.1f} CPU s; "
              "gradients of the draws only (per gradient: CPU less compile)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--d", type=int, nargs="*", default=None)
    parser.add_argument("--full", nargs="*", default=None, help="N:d settings on all rows")
    parser.add_argument("--route-M", nargs="*", default=[str(M)],
                        help="coreset sizes of the coreset route: integers, 'auto' or "
                        "'auto:TARGET_KL'")
    parser.add_argument("--no-all-rows", action="store_true",
                        help="only the coreset route on all-rows data (no all-rows MCMC)")
    parser.add_argument("--no-numpyro", action="store_true")
    parser.add_argument("--fresh", action="store_true",
                        help="rerun the all-rows NUTS runs instead of reading their cache")
    parser.add_argument("--reference-draws", type=int, default=None)
    parser.add_argument("--same-settings", nargs="*", default=None,
                        help="family:N:d cases of the same-settings table (e.g. "
                        "logistic:1e5:30 negative_binomial:2e4:2), run alone")
    args = parser.parse_args()
    if args.same_settings is not None:
        cases = [(c.split(":")[0], int(float(c.split(":")[1])), int(c.split(":")[2]))
                 for c in (args.same_settings or ["logistic:1e5:30",
                                                  "negative_binomial:2e4:2"])]
        with threadpool_limits(1):
            same_settings_table(cases)
        return
    dims = args.d if args.d is not None else ([10, 30] if args.quick else [10, 30, 50, 100])
    full = args.full if args.full is not None else (
        ["2e4:10"] if args.quick else ["1e5:10", "1e5:30", "1e6:30"])
    settings = [(int(float(s.split(":")[0])), int(s.split(":")[1])) for s in full]
    route_sizes = [("auto", float(size[5:] or 0.1)) if size.startswith("auto") else
                   (int(float(size)), 0.1) for size in args.route_M]
    with_numpyro = not args.no_numpyro and not args.no_all_rows
    if with_numpyro:
        try:
            import numpyro  # noqa: F401
        except ImportError:
            print("NumPyro is not installed (pip install numpyro jax): no NumPyro rows.")
            with_numpyro = False
    with threadpool_limits(1):
        if dims:
            coreset_table(dims, 20_000 if args.quick else 100_000,
                          args.reference_draws or 40_000)
        if settings:
            full_table(settings, args.reference_draws or 10_000, with_numpyro, route_sizes,
                       all_rows=not args.no_all_rows, fresh=args.fresh)


if __name__ == "__main__":
    main()
