"""MCMC by NUTS (the default) and emcee's ensemble: reproducibility, Bernstein-von Mises
agreement with Laplace on large data, agreement with exact quadrature on small skewed
posteriors, diagnostics, the run to a target effective sample size, the sample posterior,
sample-weight semantics of the target and posterior-predictive moments over draws."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.special import expit, log_expit

from skcoreset import _progress
from skcoreset.families import LogisticFamily, PoissonFamily
from skcoreset._inference import prior_precision
from skcoreset._inference.diagnostics import bulk_effective_sample_size, rank_r_hat
from skcoreset._inference.mcmc import (_diagnose, default_n_walkers, log_probability, mcmc,
                                       sample_predictive_moments)
from skcoreset.exceptions import MCMCDiagnosticWarning
from skcoreset._posterior import GaussianPosterior, SamplePosterior
from sklearn.exceptions import ConvergenceWarning

# a small one-feature logistic data set whose likelihood keeps rising with the slope (most
# points agree with a positive coefficient), so the posterior is right-skewed
_SKEW_X = np.array([0.3, 0.8, 1.5, -0.4, -1.0, 2.0, 0.1])
_SKEW_Y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0])


def _run(X, y, family, prior, fit_intercept, **kwargs):
    return mcmc(X, y, family, sample_weight=np.ones(len(y)), prior_prec=prior,
                fit_intercept=fit_intercept, **kwargs)


def _ensemble(X, y, family, prior, fit_intercept, **kwargs):
    return _run(X, y, family, prior, fit_intercept, sampler="ensemble", **kwargs)


def _small_logistic(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < expit(X @ [1.0, -0.5] + 0.2), 1.0, -1.0)
    return X, y, prior_precision(2, prior_scale=1.0, intercept_prior_scale=3.0,
                                 fit_intercept=True)


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
def test_random_state_reproducible_and_independent_of_global_state(sampler):
    X, y, prior = _small_logistic()
    kwargs = dict(sampler=sampler, n_draws=200, n_burnin=20, thin=1, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)  # deliberately short chains
        np.random.seed(0)
        a = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        np.random.seed(1)
        b = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        c = _run(X, y, LogisticFamily(), prior, True, **{**kwargs, "random_state": 4})
        d = _run(X, y, LogisticFamily(), prior, True,
                 **{**kwargs, "random_state": np.random.RandomState(3)})
    assert a.extra["sampler"] == sampler
    assert a.extra["n_walkers" if sampler == "ensemble" else "n_chains"] == {
        "ensemble": 16, "nuts": 4}[sampler]
    np.testing.assert_array_equal(a.posterior.samples, b.posterior.samples)
    np.testing.assert_array_equal(a.posterior.samples, d.posterior.samples)
    assert (a.posterior.samples.shape != c.posterior.samples.shape
            or not np.allclose(a.posterior.samples, c.posterior.samples))


def test_chain_plan_and_result_fields():
    X, y, prior = _small_logistic()
    # n_walkers does not divide n_draws: exactly n_draws draws are returned
    result = _ensemble(X, y, LogisticFamily(), prior, True, n_draws=1000, n_walkers=24,
                       random_state=0)
    p = 3
    assert result.posterior.samples.shape == (1000, p)
    extra = result.extra
    assert extra["n_walkers"] == 24
    assert extra["n_burnin"] == 100 + 150 * p
    draws_per_walker = -(-1000 // 24)
    # default thin: the shortest production run of at least 500 + 750 p steps
    assert extra["thin"] == -(-(500 + 750 * p) // draws_per_walker)
    assert extra["n_steps"] == draws_per_walker * extra["thin"] >= 500 + 750 * p
    assert result.n_iter == extra["n_burnin"] + extra["n_steps"]
    assert result.converged and result.log_evidence is None
    assert 0.2 < extra["acceptance_fraction"] < 0.8
    assert extra["autocorr_time"].shape == (p,)
    # the effective sample size of the 1000 kept draws: the chain's, at most 1000
    np.testing.assert_allclose(extra["effective_sample_size"],
                               np.minimum(1000, 24 * extra["n_steps"] / extra["autocorr_time"]))
    assert extra["r_hat"].shape == (p,) and np.all(np.abs(extra["r_hat"] - 1) < 0.05)
    assert isinstance(extra["laplace"].posterior, GaussianPosterior)
    # the default ensemble scales with the dimension: max(16, 4 p), never below emcee's 2 p
    assert [default_n_walkers(p) for p in (1, 3, 4, 10)] == [16, 16, 16, 40]
    with pytest.raises(ValueError, match="n_walkers"):
        _ensemble(X, y, LogisticFamily(), prior, True, n_walkers=5)


def _whitened_cov(cov, reference_chol):
    a = linalg.solve_triangular(reference_chol, cov, lower=True)
    return linalg.solve_triangular(reference_chol, a.T, lower=True)


_BVM_RUNS = {"ensemble": dict(n_draws=2000, thin=13, n_burnin=300, n_walkers=8),
             "nuts": dict(n_draws=2000)}


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
@pytest.mark.parametrize("model", ["logistic", "poisson"])
def test_bernstein_von_mises_agreement_with_laplace(model, sampler):
    # 5,000 well-specified points: posterior and Laplace approximation differ by O(1/sqrt(n))
    # ~ 0.014 posterior standard deviations, a quarter of the chain's Monte Carlo error
    # (sd / sqrt(ESS) with ESS > 300)
    rng = np.random.default_rng(0)
    n = 5_000
    X = rng.normal(size=(n, 2))
    if model == "logistic":
        family = LogisticFamily()
        y = np.where(rng.random(n) < expit(X @ [-1.0, 0.5] + 0.3), 1.0, -1.0)
    else:
        family = PoissonFamily("log")
        X *= 0.5
        y = rng.poisson(np.exp(X @ [-0.5, 0.8] + 1.0)).astype(float)
    prior = prior_precision(2, prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MCMCDiagnosticWarning)
        result = _run(X, y, family, prior, True, sampler=sampler, random_state=0,
                      **_BVM_RUNS[sampler])
    assert result.converged
    lap = result.extra["laplace"].posterior
    ess = result.extra["effective_sample_size"]
    assert ess.min() > 300
    post = result.posterior
    # means: z-scores against the Monte Carlo standard error sd / sqrt(ESS)
    z = (post.mean - lap.mean) / (lap.std / np.sqrt(ess))
    assert np.all(np.abs(z) < 4), z
    # covariance: in Laplace-whitened coordinates it is the identity up to Monte Carlo error,
    # sd ~ sqrt(2 / ESS) on the diagonal, sqrt(1 / ESS) off it
    white = _whitened_cov(post.cov, lap.cov_cholesky)
    assert np.max(np.abs(white - np.eye(3))) < 4 * np.sqrt(2 / ess.min()), white


def _exact_moments(grid_theta, log_density):
    w = np.exp(log_density - log_density.max())
    w /= w.sum()
    mean = w @ grid_theta
    centred = grid_theta - mean
    return mean, (centred * w[:, None]).T @ centred, w


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_skewed_posterior_moves_from_laplace_towards_exact_mean(fit_intercept, sampler):
    X, y = _SKEW_X[:, None], _SKEW_Y
    prior = np.full(1 + fit_intercept, 1 / 9.0)  # N(0, 3^2) on every parameter
    # exact posterior moments by quadrature on a grid wide enough to hold all the mass
    if fit_intercept:
        axes = np.meshgrid(np.linspace(-6, 25, 621), np.linspace(-12, 12, 481), indexing="ij")
    else:
        axes = [np.linspace(-6, 40, 100_001)]
    grid = np.column_stack([a.ravel() for a in axes])
    eta = X @ grid[:, :1].T + (grid[:, 1] if fit_intercept else 0.0)
    log_density = log_expit(y[:, None] * eta).sum(axis=0) - 0.5 * (prior * grid**2).sum(1)
    exact_mean, exact_cov, w = _exact_moments(grid, log_density)
    # negligible mass on the boundary of the grid
    w = w.reshape(axes[0].shape)
    edges = [np.take(w, [0, -1], axis=k) for k in range(w.ndim)]
    assert max(e.max() for e in edges) < 1e-12
    exact_sd = np.sqrt(np.diag(exact_cov))

    with warnings.catch_warnings():
        warnings.simplefilter("error", MCMCDiagnosticWarning)
        # NUTS to an ESS of 2000 (the ensemble's default run gives about 4000)
        result = _run(X, y, LogisticFamily(), prior, fit_intercept, sampler=sampler,
                      random_state=0, **({"n_draws": 2000} if sampler == "nuts" else {}))
    mode = result.extra["laplace"].posterior.mean
    post = result.posterior
    se = exact_sd / np.sqrt(result.extra["effective_sample_size"])
    # the slope's exact mean lies well right of the mode (a skewed posterior) ...
    shift = exact_mean - mode
    assert shift[0] > 10 * se[0]
    # ... and MCMC moves the same way and lands on it within Monte Carlo error
    assert np.all(np.sign(post.mean - mode)[np.abs(shift) > 6 * se]
                  == np.sign(shift)[np.abs(shift) > 6 * se])
    assert np.all(np.abs(post.mean - exact_mean) < 4 * se), (post.mean, exact_mean, se)
    np.testing.assert_allclose(post.std, exact_sd, rtol=0.1)
    # MCMC is closer to the exact posterior than the Laplace approximation
    exact_chol = np.linalg.cholesky(exact_cov)
    gap_mcmc = linalg.solve_triangular(exact_chol, post.mean - exact_mean, lower=True)
    gap_laplace = linalg.solve_triangular(exact_chol, mode - exact_mean, lower=True)
    assert np.linalg.norm(gap_mcmc) < 0.3 * np.linalg.norm(gap_laplace)


def test_short_chain_warns_and_is_not_converged():
    X, y, prior = _small_logistic()
    with pytest.warns(MCMCDiagnosticWarning, match="autocorrelation times"):
        result = _ensemble(X, y, LogisticFamily(), prior, True, n_draws=160, thin=1,
                           n_burnin=0, random_state=0)
    assert not result.converged
    assert result.posterior.samples.shape == (160, 3)
    assert issubclass(MCMCDiagnosticWarning, ConvergenceWarning)
    assert issubclass(MCMCDiagnosticWarning, UserWarning)


@pytest.mark.parametrize("acceptance", [0.05, 0.95])
def test_acceptance_outside_band_warns(acceptance):
    with pytest.warns(MCMCDiagnosticWarning, match="acceptance fraction"):
        assert not _diagnose(acceptance, np.array([1.0, 2.0]), n_steps=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _diagnose(0.5, np.array([1.0, 2.0]), n_steps=1000)
    with pytest.warns(MCMCDiagnosticWarning, match="autocorrelation"):
        assert not _diagnose(0.5, np.array([np.nan]), n_steps=1000)


def test_verbose_prints_progress_with_eta(capsys, monkeypatch):
    X, y, prior = _small_logistic()
    kwargs = dict(n_draws=320, thin=1, n_burnin=20, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        quiet = _ensemble(X, y, LogisticFamily(), prior, True, **kwargs)
        assert capsys.readouterr().out == ""
        monkeypatch.setattr(_progress, "PRINT_INTERVAL", 0.0)  # a line every step
        result = _ensemble(X, y, LogisticFamily(), prior, True, verbose=1, **kwargs)
    np.testing.assert_array_equal(result.posterior.samples, quiet.posterior.samples)
    lines = capsys.readouterr().out.splitlines()
    # 16 walkers: 20 burn-in and 20 production steps, a line each, and one per stage's end
    assert len(lines) == 20 + 1 + 20 + 1
    assert lines[0].startswith("[mcmc] step  1/40  burn-in  1/20  acceptance ")
    assert lines[20].startswith("[mcmc] burn-in done: 20 steps per walker, acceptance ")
    assert lines[21].startswith("[mcmc] step 21/40  production  1/20  acceptance ")
    assert lines[40].startswith("[mcmc] step 40/40  production 20/20  acceptance ")
    assert all(" elapsed " in line and " ETA " in line for line in lines[:20] + lines[21:41])
    assert lines[40].endswith("ETA 0.0s")
    acceptance = f"acceptance {result.extra['acceptance_fraction']:.3f}"
    assert lines[41].startswith(f"[mcmc] production done: 20 steps per walker, {acceptance}")


def test_verbose_prints_stage_ends_only_on_a_short_run(capsys):
    X, y, prior = _small_logistic()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        _ensemble(X, y, LogisticFamily(), prior, True, n_draws=320, thin=1, n_burnin=20,
                  random_state=0, verbose=1)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["[mcmc] burn-in done",
                                                      "[mcmc] production done"]


# --- the target density ------------------------------------------------------------------

@pytest.mark.parametrize("family", [LogisticFamily(), PoissonFamily("log"),
                                    PoissonFamily("softplus")])
def test_integer_weights_equal_repeated_rows(family):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = (np.where(rng.random(30) < 0.5, 1.0, -1.0) if family.name == "logistic"
         else rng.poisson(2.0, size=30).astype(float))
    counts = rng.integers(0, 4, size=30)  # 0 drops a row
    prior = prior_precision(2, prior_scale=2.0, intercept_prior_scale=5.0, fit_intercept=True)
    weighted = log_probability(X, y, family, sample_weight=counts.astype(float),
                               prior_prec=prior, fit_intercept=True)
    repeated = log_probability(np.repeat(X, counts, axis=0), np.repeat(y, counts), family,
                               sample_weight=np.ones(counts.sum()), prior_prec=prior,
                               fit_intercept=True)
    theta = rng.normal(size=(7, 3))
    np.testing.assert_allclose(weighted(theta), repeated(theta), rtol=1e-12)
    # vectorised over walkers: one row at a time gives the same values
    np.testing.assert_allclose(weighted(theta), [weighted(t) for t in theta], rtol=1e-12)
    # and it is the log posterior up to a constant
    eta = X @ theta[:, :2].T + theta[:, 2]
    expected = counts @ family.loglik(y, eta) - 0.5 * (prior * theta**2).sum(1)
    np.testing.assert_allclose(weighted(theta), expected, rtol=1e-12)


# --- SamplePosterior --------------------------------------------------------------------

def test_sample_posterior_moments_sample_and_kl():
    rng = np.random.default_rng(0)
    draws = rng.gamma(2.0, size=(500, 3)) @ np.array([[1, 0.5, 0], [0, 1, 0], [0, 0.3, 2]])
    post = SamplePosterior(draws)
    np.testing.assert_allclose(post.mean, draws.mean(0))
    np.testing.assert_allclose(post.cov, np.cov(draws, rowvar=False))
    np.testing.assert_allclose(post.cov_cholesky @ post.cov_cholesky.T, post.cov)
    np.testing.assert_allclose(post.std, draws.std(0, ddof=1))
    np.testing.assert_allclose(post.precision @ post.cov, np.eye(3), atol=1e-10)
    assert post.n_samples == 500 and "500" in repr(post)

    # sample resamples the stored draws, reproducibly
    s = post.sample(1000, random_state=0)
    assert s.shape == (1000, 3)
    assert all(np.any(np.all(draws == row, axis=1)) for row in s[:50])
    np.testing.assert_array_equal(s, post.sample(1000, random_state=0))
    np.testing.assert_array_equal(s, post.sample(1000, random_state=np.random.RandomState(0)))
    assert post.sample(5, random_state=np.random.default_rng(1)).shape == (5, 3)

    # Gaussian operations use the moment-matched Gaussian
    gauss = post.gaussian()
    assert isinstance(gauss, GaussianPosterior)
    np.testing.assert_allclose(gauss.cov, post.cov)
    np.testing.assert_allclose(post.logpdf(draws[:4]), gauss.logpdf(draws[:4]))
    assert np.ndim(post.logpdf(draws[0])) == 0
    other = GaussianPosterior(post.mean + 0.1, 1.5 * post.cov)
    np.testing.assert_allclose(post.kl(other), gauss.kl(other))
    np.testing.assert_allclose(other.kl(post), other.kl(gauss))  # also usable as the target
    assert abs(post.kl(post)) < 1e-12
    assert post.kl(SamplePosterior(draws[:250])) > 0


def test_sample_posterior_rejects_bad_input_and_handles_degenerate_draws():
    with pytest.raises(ValueError, match="two draws"):
        SamplePosterior(np.ones((1, 3)))
    with pytest.raises(ValueError, match="two draws"):
        SamplePosterior(np.ones(5))
    with pytest.raises(ValueError, match="NaN"):
        SamplePosterior(np.array([[0.0, np.nan], [1.0, 2.0]]))
    # fewer draws than dimensions: singular covariance, still factorable
    post = SamplePosterior(np.random.default_rng(0).normal(size=(2, 4)))
    assert np.all(np.isfinite(post.cov_cholesky))


# --- predictions over draws --------------------------------------------------------------

@pytest.mark.parametrize("family", [LogisticFamily(), PoissonFamily("log"),
                                    PoissonFamily("softplus")])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sample_predictive_moments_match_brute_force(family, fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(53, 2))
    draws = rng.normal(scale=0.5, size=(40, 2 + fit_intercept))
    eta = np.stack([X @ t[:2] + (t[2] if fit_intercept else 0.0) for t in draws], axis=1)
    mu = family.mean(eta)
    for chunk_size in (None, 1, 7):
        mean, var = sample_predictive_moments(X, draws, family, fit_intercept,
                                              chunk_size=chunk_size)
        np.testing.assert_allclose(mean, mu.mean(1), rtol=1e-12)
        np.testing.assert_allclose(var, mu.var(1), rtol=1e-10)


def test_sample_predictive_moments_with_rates_beyond_the_square_root_of_float64():
    """Rates of ~1e200 seen over an exposure of 1e-200 (the rates a fit on exposure 1e-200
    learns): the moments of the expected counts are O(1), computed directly as
    ``exp(eta + log exposure)``; the rates' own variance exceeds float64 and is inf."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    draws = np.c_[rng.normal(scale=0.3, size=(50, 2)), 460.0 + rng.normal(scale=0.2, size=50)]
    exposure = np.exp(-rng.uniform(455.0, 465.0, 30))
    eta = X @ draws[:, :2].T + draws[:, 2]
    counts = np.exp(eta + np.log(exposure)[:, None])
    family = PoissonFamily("log")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for chunk_size in (None, 7):
            mean, var = sample_predictive_moments(X, draws, family, True, scale=exposure,
                                                  chunk_size=chunk_size)
            np.testing.assert_allclose(mean, counts.mean(1), rtol=1e-12)
            np.testing.assert_allclose(var, counts.var(1), rtol=1e-10)
        rates_mean, rates_var = sample_predictive_moments(X, draws, family, True)
    np.testing.assert_allclose(rates_mean, counts.mean(1) / exposure, rtol=1e-12)
    assert np.all(rates_var == np.inf)


def test_sample_predictive_moments_take_the_log_of_the_scale_beyond_float64():
    """``log_scale`` o: the moments of exp(eta + o), computed directly for rates around
    exp(-800) over o ~ 800, where exp(o) overflows; within float64 the same as
    ``scale=exp(o)``."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    draws = np.c_[rng.normal(scale=0.3, size=(50, 2)), -800.0 + rng.normal(scale=0.2, size=50)]
    o = rng.uniform(795.0, 805.0, 30)
    counts = np.exp(X @ draws[:, :2].T + draws[:, 2] + o[:, None])
    family = PoissonFamily("log")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for chunk_size in (None, 7):
            mean, var = sample_predictive_moments(X, draws, family, True, log_scale=o,
                                                  chunk_size=chunk_size)
            np.testing.assert_allclose(mean, counts.mean(1), rtol=1e-11)
            np.testing.assert_allclose(var, counts.var(1), rtol=1e-10)
    draws[:, 2] += 800.0
    small = o - 800.0
    by_log = sample_predictive_moments(X, draws, family, True, log_scale=small)
    by_scale = sample_predictive_moments(X, draws, family, True, scale=np.exp(small))
    np.testing.assert_allclose(by_log, by_scale, rtol=1e-13)
    with pytest.raises(ValueError, match="scale or log_scale"):
        sample_predictive_moments(X, draws, family, True, scale=1.0, log_scale=0.0)


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
def test_poisson_mcmc_predicts_finite_counts_at_an_exposure_of_1e_200(sampler):
    from skcoreset import BayesianPoissonRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = rng.poisson(np.exp(0.5 * X[:, 0]))
    exposure = np.full(40, 1e-200)
    est = BayesianPoissonRegression(method="mcmc", sampler=sampler, n_draws=200, n_burnin=20,
                                    thin=1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        est.fit(X, y, exposure=exposure)
    mean, std = est.predict(X[:5], return_std=True, exposure=exposure[:5])
    theta = est.posterior_samples_
    counts = np.exp(X[:5] @ theta[:, :2].T + theta[:, 2] + np.log(exposure[:5])[:, None])
    np.testing.assert_allclose(mean, counts.mean(1), rtol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(counts.mean(1) + counts.var(1)), rtol=1e-10)


def test_sample_predictive_moments_agree_with_gaussian_quadrature():
    # many draws from a Gaussian posterior reproduce the quadrature the estimators use
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    gauss = GaussianPosterior(np.array([0.5, -1.0, 0.2]), np.diag([0.1, 0.05, 0.05]))
    draws = gauss.sample(200_000, random_state=0)
    for family in (LogisticFamily(), PoissonFamily("log")):
        mean, var = sample_predictive_moments(X, draws, family, True)
        m = X @ gauss.mean[:2] + gauss.mean[2]
        v = np.einsum("ij,jk,ik->i", np.c_[X, np.ones(20)], gauss.cov, np.c_[X, np.ones(20)])
        ref_mean, ref_var = family.expected_mean(m, v)
        np.testing.assert_allclose(mean, ref_mean, rtol=0.02)
        np.testing.assert_allclose(var, ref_var, rtol=0.05)


def test_default_run_is_capped_for_many_parameters_and_says_how_to_get_more():
    """d > N gave p = 51: 204 walkers x 46,500 steps by default. Now the defaulted burn-in and
    thinning fit in MAX_DEFAULT_EVALUATIONS walker steps, with a warning naming the values of
    n_burnin and thin for the full run; explicit values are not capped; small p unchanged."""
    from skcoreset._inference.mcmc import MAX_DEFAULT_EVALUATIONS, _chain_plan

    with pytest.warns(MCMCDiagnosticWarning, match=r"thin=1938, n_burnin=7750"):
        n_walkers, per_walker, thin, n_burnin = _chain_plan(51, None, 4000, None, None)
    assert n_walkers == 204
    assert n_walkers * (n_burnin + per_walker * thin) <= 1.01 * MAX_DEFAULT_EVALUATIONS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _chain_plan(51, None, 4000, 7750, 1938) == (204, 20, 1938, 7750)
        assert _chain_plan(11, None, 4000, None, None) == (44, 91, 97, 1750)


# --- NUTS: the run to a target effective sample size -----------------------------------------

def _correlated_logistic(n=400, d=5, seed=0):
    """Logistic data with AR(0.6)-correlated features, as real covariates often are."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(size=(n, d))
    X = noise.copy()
    for j in range(1, d):
        X[:, j] = 0.6 * X[:, j - 1] + 0.8 * noise[:, j]
    y = np.where(rng.random(n) < expit(X @ rng.normal(scale=0.7, size=d) - 0.5), 1.0, -1.0)
    return X, y, prior_precision(d, prior_scale=1.0, intercept_prior_scale=5.0,
                                 fit_intercept=True)


def test_nuts_runs_until_the_bulk_ess_reaches_n_draws():
    X, y, prior = _correlated_logistic()
    with warnings.catch_warnings():
        warnings.simplefilter("error", MCMCDiagnosticWarning)
        result = _run(X, y, LogisticFamily(), prior, True, n_draws=1500, random_state=0)
    extra = result.extra
    n_chains, p = extra["n_chains"], X.shape[1] + 1
    n_kept = extra["n_steps"] // extra["thin"]
    assert result.converged and n_chains == 4 and extra["n_burnin"] == 150
    assert result.n_iter == extra["n_burnin"] + extra["n_steps"]
    # the draws are stored step by step: (iteration, chain) flattened
    chains = result.posterior.samples.reshape(n_kept, n_chains, p)
    np.testing.assert_allclose(extra["effective_sample_size"],
                               bulk_effective_sample_size(chains))
    np.testing.assert_allclose(extra["r_hat"], rank_r_hat(chains))
    assert extra["effective_sample_size"].min() >= 1500 and extra["r_hat"].max() <= 1.01
    # NUTS with the Laplace metric: around one effective draw per iteration, so the run is
    # not much longer than the target asks (the first round is half of it)
    assert n_kept * n_chains < 2 * 1500
    stats = extra["sample_stats"]
    assert all(value.shape == (n_chains, n_kept) for value in stats.values())
    assert 0.7 < extra["acceptance_fraction"] < 0.95  # dual averaging aims at 0.8
    assert extra["n_divergences"] == 0 and not stats["diverging"].any()
    assert np.all(stats["n_steps"] <= 2 ** stats["tree_depth"] - 1)  # Stan's depth
    assert np.all(extra["e_bfmi"] > 0.3)
    # every gradient is counted: warm-up and every leapfrog step of the kept iterations
    assert extra["n_gradients"] > stats["n_steps"].sum()
    # each chain keeps its adapted step size after the warm-up
    assert np.all(stats["step_size"] == stats["step_size"][:, :1])


def test_nuts_next_round_and_r_hat_limit():
    from skcoreset._inference.nuts import _next_round, r_hat_limit

    # at the pace so far (2000 ESS from 500 draws per chain) the target 4000 needs 1100
    assert _next_round(500, 4000, 2000.0, 1.0, 2000.0, budget=10_000) == 600
    # the ESS is reached but R-hat is not: a quarter more
    assert _next_round(500, 4000, 5000.0, 1.02, 2000.0, budget=10_000) == 125
    assert _next_round(500, 4000, 5000.0, 1.005, 2000.0, budget=10_000) == 0
    # never past the budget; a NaN estimate (too few draws) asks for the whole budget
    assert _next_round(900, 4000, 100.0, 1.0, 100.0, budget=1000) == 100
    assert _next_round(10, 4000, np.nan, np.nan, np.nan, budget=1000) == 990
    # R-hat's limit is 1.01 from an ESS of 400 on, wider for fewer effective draws
    assert r_hat_limit(4000) == r_hat_limit(400) == pytest.approx(1.01)
    assert r_hat_limit(100) == pytest.approx(1.04)


def test_nuts_budget_stops_the_run_and_warns_with_the_numbers(monkeypatch):
    from skcoreset._inference import nuts as nuts_module

    # a one-parameter skewed posterior: NUTS gets ~0.3 effective draws per iteration there,
    # so a budget of one draw per effective draw asked for cannot be enough
    monkeypatch.setattr(nuts_module, "BUDGET_FACTOR", 1)
    X, y = _SKEW_X[:, None], _SKEW_Y
    with pytest.warns(MCMCDiagnosticWarning, match=r"budget of 250 draws per chain \(thin=1\) "
                      r"with a minimum bulk effective sample size of \d+ \(n_draws=1000 "
                      r"asked for\).*thin=2") as record:
        result = _run(X, y, LogisticFamily(), np.array([1 / 9.0]), False, n_draws=1000,
                      random_state=0)
    assert len(record) == 1
    assert not result.converged and result.extra["n_steps"] == 250
    assert result.extra["effective_sample_size"][0] < 1000


def test_nuts_diagnose_warns_about_divergences_tree_depth_and_energy():
    from skcoreset._inference.nuts import _diagnose

    healthy = {"diverging": np.zeros((4, 100), bool), "tree_depth": np.full((4, 100), 3),
               "e_bfmi": [1.0, 0.9, 1.1, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _diagnose(1000, 1200.0, 1.004, 900.0, 1000, healthy, 1, 10)
    sick = {"diverging": healthy["diverging"].copy(), "tree_depth": healthy["tree_depth"].copy(),
            "e_bfmi": [1.0, 0.2, 1.1, 1.0]}
    sick["diverging"][1, :3] = True
    sick["tree_depth"][0, :5] = 10
    with pytest.warns(MCMCDiagnosticWarning) as record:
        assert not _diagnose(1000, 1200.0, 1.004, 900.0, 1000, sick, 1, 10)
    messages = " ".join(str(w.message) for w in record)
    assert "3 of 400 NUTS transitions after the warm-up diverged" in messages
    assert "5 of 400 NUTS transitions reached the maximum tree depth 10" in messages
    assert "E-BFMI) of 1 chain(s) is below 0.3 (lowest 0.20)" in messages
    with pytest.warns(MCMCDiagnosticWarning, match=r"R-hat of 1\.030 \(at most 1\.010"):
        assert not _diagnose(1000, 1200.0, 1.03, 900.0, 1000, healthy, 1, 10)


def test_nuts_chains_in_parallel_give_the_same_draws():
    X, y, prior = _correlated_logistic(n=200, d=3)
    kwargs = dict(n_draws=200, n_burnin=50, random_state=0)
    one = _run(X, y, LogisticFamily(), prior, True, **kwargs)
    two = _run(X, y, LogisticFamily(), prior, True, n_jobs=2, **kwargs)
    np.testing.assert_array_equal(one.posterior.samples, two.posterior.samples)
    np.testing.assert_array_equal(one.extra["sample_stats"]["n_steps"],
                                  two.extra["sample_stats"]["n_steps"])


def test_nuts_thin_and_no_warm_up():
    X, y, prior = _correlated_logistic(n=200, d=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        thinned = _run(X, y, LogisticFamily(), prior, True, n_draws=100, thin=3, n_chains=2,
                       n_burnin=30, random_state=0)
        cold = _run(X, y, LogisticFamily(), prior, True, n_draws=100, n_burnin=0,
                    random_state=0)
    extra = thinned.extra
    assert extra["n_steps"] == 3 * (thinned.posterior.n_samples // 2)
    assert extra["sample_stats"]["n_steps"].shape == (2, extra["n_steps"] // 3)
    # without a warm-up the step size is the leapfrog's scale on N(0, I) in p = 4 dimensions
    np.testing.assert_allclose(cold.extra["sample_stats"]["step_size"], 4 ** -0.25)
    assert cold.n_iter == cold.extra["n_steps"]


def test_whitened_target_is_the_log_posterior_in_row_chunks(monkeypatch):
    """The sampler's target: -log posterior at theta = mode + L z and its gradient in z, from
    one blocked pass over the rows (blocks of 7 rows here, as a large data set's would be
    many); a point where the Poisson rate overflows is +inf, not NaN."""
    from skcoreset._inference import _common
    from skcoreset._inference._common import LogPosterior
    from skcoreset._inference.nuts import WhitenedTarget

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = rng.poisson(np.exp(X @ [0.3, -0.2, 0.1] + 0.5)).astype(float)
    prior = prior_precision(3, prior_scale=1.0, intercept_prior_scale=5.0, fit_intercept=True)
    log_post = LogPosterior(X, y, PoissonFamily("log"), rng.uniform(0.5, 2, 50), prior, True)
    mode = rng.normal(scale=0.1, size=4)
    chol = np.linalg.cholesky(np.cov(rng.normal(size=(4, 20))) + np.eye(4))
    whole = WhitenedTarget(log_post, mode, chol)
    z = rng.normal(size=4)
    expected_value = whole.neg_log_dens(z)
    monkeypatch.setattr(_common, "block_rows", lambda width: 7)
    target = WhitenedTarget(log_post, mode, chol)
    grad, value = target.grad_neg_log_dens(z)
    assert value == pytest.approx(expected_value, rel=1e-12)
    assert value == pytest.approx(-log_post.value(mode + chol @ z), rel=1e-12)
    step = 1e-6
    numeric = [(target.neg_log_dens(z + step * e) - target.neg_log_dens(z - step * e))
               / (2 * step) for e in np.eye(4)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)
    assert target.n_gradients == 1

    class Overflowing(LogPosterior):
        def value_and_grad(self, theta):
            value, eta, grad = super().value_and_grad(theta)
            return (np.inf if theta[0] > 100 else value), eta, grad * np.nan

    target = WhitenedTarget(Overflowing(X, y, PoissonFamily("log"), np.ones(50), prior, True),
                            mode, chol)
    far = np.linalg.solve(chol, np.array([1e3, 0.0, 0.0, 0.0]) - mode)
    value, grad = target.neg_log_dens(far), target.grad_neg_log_dens(far)[0]
    assert value == np.inf and np.all(grad == 0.0)


def test_nuts_verbose_prints_the_warm_up_and_every_round(capsys, monkeypatch):
    monkeypatch.setattr(_progress, "PRINT_INTERVAL", 1e9)  # no lines within a round
    X, y, prior = _correlated_logistic(n=200, d=3)
    _run(X, y, LogisticFamily(), prior, True, n_draws=400, n_burnin=30, random_state=0)
    assert capsys.readouterr().out == ""
    result = _run(X, y, LogisticFamily(), prior, True, n_draws=400, n_burnin=30,
                  random_state=0, verbose=1)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[mcmc] warm-up done: 4 chains x 30 iterations, step sizes ")
    assert lines[1].startswith("[mcmc] 50/1000 draws per chain: min bulk ESS ")
    assert len(lines) >= 2 and all(" max R-hat " in line for line in lines[1:])
    done = result.extra["n_steps"]
    assert lines[-1].startswith(f"[mcmc] {done}/1000 draws per chain: min bulk ESS "
                                f"{result.extra['effective_sample_size'].min():.0f}/400")


@pytest.mark.parametrize("backend", [None, "threading"])
def test_nuts_verbose_reports_within_rounds_without_changing_the_draws(capsys, monkeypatch,
                                                                       backend):
    """On all rows a round takes minutes: a line every PRINT_INTERVAL seconds names the
    round, the chain and its iteration (warm-up included), with the ETA of the round (of
    the chain when chains run in parallel); the draws are those of a quiet run."""
    from joblib import parallel_config

    X, y, prior = _correlated_logistic(n=200, d=3)
    kwargs = dict(n_draws=40, n_burnin=6, n_chains=2, random_state=0,
                  n_jobs=None if backend is None else 2)
    with parallel_config(backend=backend or "loky"):
        quiet = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        monkeypatch.setattr(_progress, "PRINT_INTERVAL", 0.0)  # a line every iteration
        loud = _run(X, y, LogisticFamily(), prior, True, verbose=1, **kwargs)
    np.testing.assert_array_equal(loud.posterior.samples, quiet.posterior.samples)
    for key, value in quiet.extra["sample_stats"].items():
        np.testing.assert_array_equal(loud.extra["sample_stats"][key], value, err_msg=key)
    lines = [line for line in capsys.readouterr().out.splitlines() if " round " in line]
    # 2 chains x (6 warm-up iterations + 10 draws) in round 1, a line each
    first = [line for line in lines if " round 1, " in line]
    assert len(first) == 2 * (6 + 10)
    if backend is None:  # one after the other: the round's 32 iterations
        assert first[0].startswith("[mcmc] iteration  1/32  round 1, chain 1/2: warm-up 1/6")
        assert first[6].startswith("[mcmc] iteration  7/32  round 1, chain 1/2: iteration "
                                   "1/10")
        assert first[31].startswith("[mcmc] iteration 32/32  round 1, chain 2/2: iteration "
                                    "10/10  elapsed ")
        assert " round 2, chain 1/2: iteration 1/" in lines[32]
    else:  # side by side: each chain's 16
        for chain in (1, 2):
            mine = [line for line in first if f"chain {chain}/2" in line]
            assert mine[0].startswith(f"[mcmc] iteration  1/16  round 1, chain {chain}/2: "
                                      "warm-up 1/6")
            assert mine[-1].startswith(f"[mcmc] iteration 16/16  round 1, chain {chain}/2: "
                                       "iteration 10/10")


@pytest.mark.parametrize("params,name", [({"sampler": "hmc"}, "sampler"),
                                         ({"n_chains": 0}, "n_chains"),
                                         ({"n_jobs": 1.5}, "n_jobs")])
def test_estimator_validates_the_sampler_parameters(params, name):
    from skcoreset import BayesianLogisticRegression

    X, y, _ = _small_logistic()
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        BayesianLogisticRegression(method="mcmc", **params).fit(X, y)
