"""KL proximal-gradient VI (Khan et al. 2015): monotone ELBO, agreement with a direct
full-covariance Gaussian VI, primal (eqs. 16-17) versus dual (eq. 19) paths, the exact
conjugate posterior."""

import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import scale
from threadpoolctl import threadpool_limits

from skcoreset.families import GaussianFamily, LogisticFamily, PoissonFamily
from skcoreset._inference._common import prior_precision
from skcoreset._inference.kl_proximal import _PrimalPath, kl_proximal
from skcoreset._testing import direct_vi

from ..conftest import conjugate_linear_regression, logistic_data, poisson_data

EPS = np.finfo(float).eps


@pytest.fixture(autouse=True)
def _single_blas_thread():
    # These problems are small: threaded BLAS only adds contention on a shared 2-core machine.
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _logistic_data(n=300, d=5, seed=0):
    return logistic_data(n, np.linspace(-1, 1.5, d), 0.3, seed=seed, labels=(-1.0, 1.0))


def _poisson_data(n=300, d=5, seed=0):
    return poisson_data(n, 0.5 * np.linspace(-0.5, 0.8, d), 1.0, seed=seed, dtype=float)


def _problem(name, **kwargs):
    if name == "logistic":
        return (*_logistic_data(**kwargs), LogisticFamily())
    link = name.split("-")[1]
    return (*_poisson_data(**kwargs), PoissonFamily(link))


def _fit(X, y, family, w=None, prior_scale=1.0, intercept_prior_scale=10.0, **kwargs):
    prior = prior_precision(X.shape[1], prior_scale=prior_scale,
                            intercept_prior_scale=intercept_prior_scale, fit_intercept=True)
    w = np.ones(len(y)) if w is None else w
    return kl_proximal(X, y, family, sample_weight=w, prior_prec=prior, fit_intercept=True,
                       **kwargs)


# (poisson-log from the prior: see test_hopeless_start_warns_instead_of_diverging)
@pytest.mark.parametrize("name,init", [
    ("logistic", "laplace"), ("poisson-log", "laplace"), ("poisson-softplus", "laplace"),
    ("logistic", "prior"), ("poisson-softplus", "prior")])
def test_elbo_increases_monotonically(name, init):
    X, y, family = _problem(name)
    result = _fit(X, y, family, init=init)
    history = result.extra["elbo_history"]
    assert result.converged and len(history) == result.n_iter + 1
    assert history[-1] == result.elbo
    assert np.all(np.diff(history) >= -16 * EPS * np.abs(history[1:]))
    assert result.extra["unguarded_from"] is None
    if init == "laplace":
        # the paper's fixed step is monotone by itself from the Laplace start
        assert result.extra["n_backtracks"] == 0
    assert result.n_iter < 100


@pytest.mark.parametrize("name", ["logistic", "poisson-log", "poisson-softplus"])
def test_matches_direct_full_covariance_vi_and_beats_mean_field(name):
    X, y, family = _problem(name, n=80, d=3, seed=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    prior = prior_precision(3, prior_scale=1.5, intercept_prior_scale=5.0, fit_intercept=True)
    result = kl_proximal(X, y, family, sample_weight=w, prior_prec=prior, fit_intercept=True)
    m, V, elbo = direct_vi(X, y, family, w, prior)
    np.testing.assert_allclose(result.posterior.mean, m, rtol=1e-4)
    np.testing.assert_allclose(result.posterior.cov, V, rtol=1e-3)
    assert abs(result.elbo - elbo) < 1e-8 * abs(elbo)
    _, _, elbo_mf = direct_vi(X, y, family, w, prior, mean_field=True)
    assert result.elbo > elbo_mf + 1e-3


def test_dual_and_primal_paths_agree_on_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X, y = scale(X), np.where(y == 1, 1.0, -1.0)
    primal = _fit(X, y, LogisticFamily(), dual=False)
    dual = _fit(X, y, LogisticFamily(), dual=True)
    assert dual.extra["dual"] and not primal.extra["dual"]
    assert primal.converged and dual.converged
    assert primal.n_iter == dual.n_iter
    scale_m = np.max(np.abs(primal.posterior.mean))
    np.testing.assert_allclose(dual.posterior.mean, primal.posterior.mean, rtol=1e-8,
                               atol=1e-9 * scale_m)
    np.testing.assert_allclose(dual.posterior.cov, primal.posterior.cov, rtol=1e-7,
                               atol=1e-9 * np.max(np.abs(primal.posterior.cov)))
    np.testing.assert_allclose(dual.elbo, primal.elbo, rtol=1e-12)


@pytest.mark.parametrize("name", ["logistic", "poisson-log", "poisson-softplus"])
def test_auto_uses_the_dual_path_when_p_exceeds_n(name):
    X, y, family = _problem(name, n=30, d=60, seed=3)
    X *= 0.3
    auto = _fit(X, y, family, prior_scale=0.5)
    primal = _fit(X, y, family, prior_scale=0.5, dual=False)
    assert auto.extra["dual"] and auto.converged
    np.testing.assert_allclose(auto.posterior.mean, primal.posterior.mean, rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(auto.posterior.cov, primal.posterior.cov, rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("init", ["laplace", "prior"])
@pytest.mark.parametrize("dual", [False, True])
def test_gaussian_family_gives_the_exact_conjugate_posterior(init, dual):
    rng = np.random.default_rng(4)
    n, d, noise = 50, 3, 0.6
    X = rng.normal(size=(n, d))
    y = X @ [1.0, -2.0, 0.5] + 0.7 + noise * rng.normal(size=n)
    w = rng.uniform(0.0, 3.0, n)
    prior = prior_precision(d, prior_scale=2.0, intercept_prior_scale=5.0, fit_intercept=True)
    result = kl_proximal(X, y, GaussianFamily(noise_scale=noise), sample_weight=w,
                         prior_prec=prior, fit_intercept=True, init=init, dual=dual, tol=1e-16)
    mean, cov, log_evidence = conjugate_linear_regression(X, y, w, noise, prior)
    np.testing.assert_allclose(result.posterior.mean, mean, rtol=1e-9)
    np.testing.assert_allclose(result.posterior.cov, cov, rtol=1e-7)
    # at the exact posterior the bound is tight: ELBO = log evidence
    np.testing.assert_allclose(result.elbo, log_evidence, rtol=1e-10)


@pytest.mark.parametrize("dual", [False, True])
def test_integer_weights_equal_repeated_rows(dual):
    X, y = _logistic_data(n=60, d=3, seed=5)
    w = np.random.default_rng(6).integers(0, 4, len(y)).astype(float)
    weighted = _fit(X, y, LogisticFamily(), w=w, dual=dual, tol=1e-14)
    rows = np.repeat(np.arange(len(y)), w.astype(int))
    repeated = _fit(X[rows], y[rows], LogisticFamily(), dual=dual, tol=1e-14)
    np.testing.assert_allclose(weighted.posterior.mean, repeated.posterior.mean, rtol=1e-7)
    np.testing.assert_allclose(weighted.posterior.cov, repeated.posterior.cov, rtol=1e-6)
    np.testing.assert_allclose(weighted.elbo, repeated.elbo, rtol=1e-10)


def test_convergence_warning_when_max_iter_is_hit():
    X, y = _logistic_data()
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        result = _fit(X, y, LogisticFamily(), max_iter=2)
    assert result.n_iter == 2 and not result.converged
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert _fit(X, y, LogisticFamily()).converged


def test_hopeless_start_warns_instead_of_diverging():
    # under the prior N(0, 100) on the intercept E[exp(eta)] ~ e^50: every step overshoots
    X, y = _poisson_data()
    with pytest.warns(ConvergenceWarning, match="no step size increases the ELBO"):
        result = _fit(X, y, PoissonFamily("log"), init="prior")
    assert not result.converged
    assert np.all(np.isfinite(result.posterior.cov))


def test_invalid_options_raise():
    X, y = _logistic_data(n=20, d=2)
    for kwargs, match in [({"beta": 0.0}, "beta"), ({"init": "map"}, "init"),
                          ({"dual": "yes"}, "dual"), ({"newton_steps": "yes"}, "newton_steps")]:
        with pytest.raises(ValueError, match=match):
            _fit(X, y, LogisticFamily(), **kwargs)


@pytest.mark.parametrize("name", ["logistic", "poisson-log", "poisson-softplus"])
def test_fixed_point_steps_reach_the_proximal_fixed_point_in_fewer_steps(name):
    X, y, family = _problem(name, n=200, d=4, seed=7)
    w = np.random.default_rng(8).uniform(0.0, 2.0, len(y))
    proximal = _fit(X, y, family, w=w, tol=1e-22, newton_steps=False)
    fixed_point = _fit(X, y, family, w=w, tol=1e-22, newton_steps=True)
    assert proximal.converged and fixed_point.converged
    assert proximal.extra["n_newton"] == 0
    assert fixed_point.extra["n_newton"] == fixed_point.n_iter < proximal.n_iter
    np.testing.assert_allclose(fixed_point.posterior.mean, proximal.posterior.mean,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fixed_point.posterior.cov, proximal.posterior.cov, rtol=1e-9)
    assert fixed_point.elbo == pytest.approx(proximal.elbo, rel=1e-13)
    history = fixed_point.extra["elbo_history"]
    assert np.all(np.diff(history) >= -16 * EPS * np.abs(history[1:]))
    # an explicit beta (or the prior start) keeps the paper's proximal steps
    assert _fit(X, y, family, w=w, beta=1.0, newton_steps=True).extra["n_newton"] == 0


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_latent_variances_match_the_row_norms_in_both_precisions(fit_intercept):
    from skcoreset._design import latent_moments, latent_variances

    def row_norms(X, mean):  # the definition: a_n . mean and ||L^-1 a_n||^2, design A formed
        A = np.column_stack([X, np.ones(len(X))]) if fit_intercept else X
        return A @ mean, np.sum((A @ chol_inv.T) ** 2, axis=1)

    rng = np.random.default_rng(9)
    X = rng.normal(size=(5_001, 6))
    p = 6 + fit_intercept
    B = rng.normal(size=(p, p))
    chol_inv = np.linalg.inv(np.linalg.cholesky(B @ B.T + 1e4 * np.eye(p)))
    mean = rng.normal(size=p)
    m_exact, exact = row_norms(X, mean)
    # the predictive path: covariance V = L^-T L^-1 through its lower Cholesky factor
    m_pred, v_pred = latent_moments(X, mean, np.linalg.cholesky(chol_inv.T @ chol_inv),
                                    fit_intercept)
    np.testing.assert_allclose(m_pred, m_exact, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(v_pred, exact, rtol=1e-10)
    np.testing.assert_allclose(latent_variances(X, chol_inv, fit_intercept), exact,
                               rtol=1e-13)
    m_lat, v_lat = latent_variances(X, chol_inv, fit_intercept, np.float32, mean=mean)
    np.testing.assert_allclose(m_lat, m_exact, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(v_lat, exact, rtol=1e-6)
    single = latent_variances(X, chol_inv, fit_intercept, np.float32)
    np.testing.assert_allclose(single, exact, rtol=1e-6)
    assert not np.allclose(single, exact, rtol=1e-12, atol=0)
    # entries of X beyond float32's range: recomputed in float64
    X[7, 2] = 1e200
    _, exact = row_norms(X, np.zeros(p))
    np.testing.assert_allclose(latent_variances(X, chol_inv, fit_intercept, np.float32),
                               exact, rtol=1e-13)


def test_large_n_single_precision_variances_keep_the_fixed_point(monkeypatch):
    # n >= 50,000: fixed-point steps and float32 latent variances; against the float64
    # proximal iteration (forced by raising the threshold) at a tight tolerance
    import importlib
    module = importlib.import_module("skcoreset._inference.kl_proximal")
    X, y, family = _problem("logistic", n=60_000, d=3, seed=10)
    large = _fit(X, y, family, tol=1e-16)
    monkeypatch.setattr(module, "LARGE_N", 10**9)
    small = _fit(X, y, family, tol=1e-16)
    assert large.converged and small.converged
    assert large.extra["n_newton"] >= 1 and small.extra["n_newton"] == 0
    np.testing.assert_allclose(large.posterior.mean, small.posterior.mean, rtol=1e-9)
    np.testing.assert_allclose(large.posterior.cov, small.posterior.cov, rtol=1e-7)


def test_criterion_is_the_same_from_either_square_root():
    """The stopping criterion from ``F = L^-1`` (the precision's factor inverted) and from
    ``F = C^T`` (``C`` the covariance's factor, the sparse rows' way) equals the module
    docstring's formula evaluated with explicit matrices."""
    from scipy import linalg
    from skcoreset._inference.kl_proximal import _PrimalPath

    rng = np.random.default_rng(0)
    p = 300  # two blocks of columns and part of a third
    a = rng.normal(size=(2 * p, p))
    precision = a.T @ a / p + np.eye(p)
    b = rng.normal(size=(2 * p, p))
    target = b.T @ b / p + np.eye(p)
    grad = rng.normal(size=p)
    cov = np.linalg.inv(precision)
    mismatch = np.linalg.inv(cov) - target  # G = V^-1 - T
    want = 0.5 * (grad @ cov @ grad + 0.5 * np.trace(cov @ mismatch @ cov @ mismatch))
    chol_inv = np.asfortranarray(linalg.inv(linalg.cholesky(precision, lower=True)))
    cov_chol = np.asfortranarray(linalg.cholesky(cov, lower=True))
    for root, transposed in ((chol_inv, False), (cov_chol, True)):
        got = _PrimalPath._criterion(root, transposed, grad, target)
        assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("n,d,seed,sparse_rows", [(20, 5, 1, False), (15, 8, 0, False),
                                                  (20, 5, 1, True)])
def test_rejected_fixed_point_step_rebuilds_the_dropped_precision(monkeypatch, n, d, seed,
                                                                  sparse_rows):
    # few rows and a wide prior: the latent variances are large and a fixed-point step lowers
    # the bound (after three steps, after one): the proximal step from there needs the
    # iterate's precision, which the fixed-point step dropped and the fit rebuilds (sparse
    # rows: from the covariance, the other way of the passes)
    X, y, family = _problem("logistic", n=n, d=d, seed=seed)
    if sparse_rows:
        X = sparse.csr_matrix(X)
    fit = _fit(X, y, family, tol=1e-20, newton_steps=True, prior_scale=10.0)
    assert 0 < fit.extra["n_newton"] < fit.n_iter and fit.converged

    # the reference keeps every precision, as the fit did before dropping them
    initial = _PrimalPath.initial

    def keeping_precision(self, *args, **kwargs):
        state = initial(self, *args, **kwargs)
        state.params.pop("rebuild", None)
        return state

    monkeypatch.setattr(_PrimalPath, "initial", keeping_precision)
    monkeypatch.setattr(_PrimalPath, "drops_precision", False)  # sparse rows: as dense
    kept = _fit(X, y, family, tol=1e-20, newton_steps=True, prior_scale=10.0)
    assert (fit.n_iter, fit.extra["n_newton"]) == (kept.n_iter, kept.extra["n_newton"])
    np.testing.assert_allclose(fit.extra["elbo_history"], kept.extra["elbo_history"],
                               rtol=1e-14)
    np.testing.assert_allclose(fit.posterior.mean, kept.posterior.mean, rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(fit.posterior.cov, kept.posterior.cov, rtol=1e-12, atol=1e-14)


def test_sparse_fixed_point_steps_hold_one_p_by_p_matrix_during_the_pass(monkeypatch):
    """On sparse rows, a fixed-point step factors its target in place and forms V there, so
    the pass over the rows starts with V alone among the ``p x p`` arrays (where it started
    with the precision and V); the posterior is bit for bit the one of the steps that keep
    every precision."""
    import importlib
    import tracemalloc
    from scipy.special import expit

    module = importlib.import_module("skcoreset._inference.kl_proximal")

    rng = np.random.default_rng(0)
    n, levels = 3000, (200, 150, 100)
    codes = np.column_stack([rng.choice(k, size=n, p=rng.dirichlet(np.full(k, 0.5)))
                             for k in levels]) + np.cumsum((0,) + levels[:-1])
    X = sparse.csr_matrix((np.ones(codes.size), codes.ravel(),
                           np.arange(0, codes.size + 1, len(levels))), shape=(n, sum(levels)))
    y = np.where(rng.random(n) < expit(X @ rng.normal(0.0, 0.5, X.shape[1]) - 1.0), 1.0, -1.0)
    p = X.shape[1] + 1
    at_pass = []
    sums = module._sparse_elbo_sums

    def recorded(*args, **kwargs):
        at_pass.append(tracemalloc.get_traced_memory()[0])
        return sums(*args, **kwargs)

    monkeypatch.setattr(module, "_sparse_elbo_sums", recorded)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        fit = _fit(X, y, LogisticFamily(), newton_steps=True)
    finally:
        tracemalloc.stop()
    assert fit.converged and fit.extra["n_newton"] == fit.n_iter >= 2
    assert max(at_pass) - start < 1.5 * 8 * p * p, [(m - start) / (8 * p * p) for m in at_pass]
    monkeypatch.setattr(_PrimalPath, "drops_precision", False)
    kept = _fit(X, y, LogisticFamily(), newton_steps=True)
    np.testing.assert_array_equal(fit.posterior.mean, kept.posterior.mean)
    np.testing.assert_array_equal(fit.posterior.cov_cholesky, kept.posterior.cov_cholesky)
    assert fit.extra["elbo_history"].tolist() == kept.extra["elbo_history"].tolist()
