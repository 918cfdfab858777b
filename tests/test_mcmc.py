"""emcee-based MCMC: reproducibility, Bernstein-von Mises agreement with Laplace on large data,
agreement with exact quadrature on small skewed posteriors, diagnostics, the sample posterior,
sample-weight semantics of the target and posterior-predictive moments over draws."""

import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.special import expit, log_expit

from skcoreset import _progress
from skcoreset.families import LogisticFamily, PoissonFamily
from skcoreset._inference import prior_precision
from skcoreset._inference.mcmc import (MCMCDiagnosticWarning, _diagnose, default_n_walkers,
                                       log_probability, mcmc, sample_predictive_moments)
from skcoreset._posterior import GaussianPosterior, SamplePosterior
from sklearn.exceptions import ConvergenceWarning

# a small one-feature logistic data set whose likelihood keeps rising with the slope (most
# points agree with a positive coefficient), so the posterior is right-skewed
_SKEW_X = np.array([0.3, 0.8, 1.5, -0.4, -1.0, 2.0, 0.1])
_SKEW_Y = np.array([1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0])


def _run(X, y, family, prior, fit_intercept, **kwargs):
    return mcmc(X, y, family, sample_weight=np.ones(len(y)), prior_prec=prior,
                fit_intercept=fit_intercept, **kwargs)


def _small_logistic(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < expit(X @ [1.0, -0.5] + 0.2), 1.0, -1.0)
    return X, y, prior_precision(2, prior_scale=1.0, intercept_prior_scale=3.0,
                                 fit_intercept=True)


def test_random_state_reproducible_and_independent_of_global_state():
    X, y, prior = _small_logistic()
    kwargs = dict(n_draws=200, n_burnin=20, thin=1, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)  # deliberately short chains
        np.random.seed(0)
        a = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        np.random.seed(1)
        b = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        c = _run(X, y, LogisticFamily(), prior, True, **{**kwargs, "random_state": 4})
        d = _run(X, y, LogisticFamily(), prior, True,
                 **{**kwargs, "random_state": np.random.RandomState(3)})
    assert a.extra["n_walkers"] == 16
    np.testing.assert_array_equal(a.posterior.samples, b.posterior.samples)
    np.testing.assert_array_equal(a.posterior.samples, d.posterior.samples)
    assert not np.allclose(a.posterior.samples, c.posterior.samples)


def test_chain_plan_and_result_fields():
    X, y, prior = _small_logistic()
    # n_walkers does not divide n_draws: exactly n_draws draws are returned
    result = _run(X, y, LogisticFamily(), prior, True, n_draws=1000, n_walkers=24,
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
        _run(X, y, LogisticFamily(), prior, True, n_walkers=5)


def _whitened_cov(cov, reference_chol):
    a = linalg.solve_triangular(reference_chol, cov, lower=True)
    return linalg.solve_triangular(reference_chol, a.T, lower=True)


@pytest.mark.parametrize("model", ["logistic", "poisson"])
def test_bernstein_von_mises_agreement_with_laplace(model):
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
        result = _run(X, y, family, prior, True, n_draws=2000, thin=13, n_burnin=300,
                      n_walkers=8, random_state=0)
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


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_skewed_posterior_moves_from_laplace_towards_exact_mean(fit_intercept):
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
        result = _run(X, y, LogisticFamily(), prior, fit_intercept, random_state=0)
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
        result = _run(X, y, LogisticFamily(), prior, True, n_draws=160, thin=1, n_burnin=0,
                      random_state=0)
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
        quiet = _run(X, y, LogisticFamily(), prior, True, **kwargs)
        assert capsys.readouterr().out == ""
        monkeypatch.setattr(_progress, "PRINT_INTERVAL", 0.0)  # a line every step
        result = _run(X, y, LogisticFamily(), prior, True, verbose=1, **kwargs)
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
        _run(X, y, LogisticFamily(), prior, True, n_draws=320, thin=1, n_burnin=20,
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
