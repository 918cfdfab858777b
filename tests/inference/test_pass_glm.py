"""PASS-GLM (Huggins, Adams & Broderick 2017): the Chebyshev approximation, the sufficient
statistics (streaming, dask, distributed), the closed-form degree-2 posterior and the
higher-degree surrogate."""

import warnings

import numpy as np
import pytest
from numpy.polynomial import polynomial
from scipy import integrate
from scipy.special import gammaln, log_expit

from skcoreset.families import GaussianFamily, LogisticFamily, PoissonFamily
from skcoreset._inference._common import prior_precision
from skcoreset._inference.laplace import laplace
from skcoreset._inference.pass_glm import (
    PassGLMStatistics, check_pass_degree, chebyshev_coefficients, pass_glm,
    pass_glm_posterior, pass_glm_statistics, pass_glm_statistics_dask)

from ..conftest import logistic_data, poisson_data

LOGISTIC = LogisticFamily()
POISSON = PoissonFamily(link="log")


def _logistic_data(n=2000, d=3, norm=1.0, intercept=0.2, seed=0, bounded=False):
    # bounded: uniform features with unit variance, so |x . theta| has a hard bound
    coef = np.linspace(1.0, -0.6, d)
    coef *= norm / np.linalg.norm(coef)
    return logistic_data(n, coef, intercept, seed=seed, uniform=np.sqrt(3) if bounded else None,
                         labels=(-1.0, 1.0))


def _poisson_data(n=2000, d=2, seed=0):
    return poisson_data(n, np.linspace(0.6, -0.4, d), 0.5, seed=seed, scale=0.4, dtype=float)


def _prior(d, fit_intercept=True):
    return prior_precision(d, prior_scale=1.0, intercept_prior_scale=10.0,
                           fit_intercept=fit_intercept)


def _design(X, fit_intercept=True):
    return np.column_stack([X, np.ones(len(X))]) if fit_intercept else X


def _assert_stats_equal(a, b, rtol=1e-10):
    assert a.n_samples == b.n_samples
    np.testing.assert_allclose(a.sum_weight, b.sum_weight, rtol=rtol)
    np.testing.assert_allclose(a.moment1, b.moment1, rtol=rtol, atol=rtol * np.abs(a.moment1).max())
    np.testing.assert_allclose(a.gram, b.gram, rtol=rtol, atol=rtol * np.abs(a.gram).max())
    np.testing.assert_allclose(a.linear, b.linear, rtol=rtol)
    np.testing.assert_allclose(a.constant, b.constant, rtol=rtol)
    assert a.higher.keys() == b.higher.keys()
    for m in a.higher:
        scale = np.abs(a.higher[m]).max()
        np.testing.assert_allclose(a.higher[m], b.higher[m], rtol=rtol, atol=rtol * scale)


def _relative_errors(result, reference):
    """Max relative error of the posterior means and of the marginal variances."""
    mean, ref_mean = result.posterior.mean, reference.posterior.mean
    var, ref_var = np.diag(result.posterior.cov), np.diag(reference.posterior.cov)
    return np.max(np.abs(mean - ref_mean) / np.abs(ref_mean)), np.max(np.abs(var / ref_var - 1))


# --- the Chebyshev approximation (Algorithm 1, lines 1-2) --------------------------------------
def test_degree2_logistic_sup_error_matches_paper():
    # Paper §5: "sup_{s in [-4,4]} |phi_2(s) - phi(s)| < 0.069" (and Fig. 1a: "at most 0.069")
    coef = chebyshev_coefficients("logistic", 2, 4.0)
    s = np.linspace(-4.0, 4.0, 200_001)
    sup_error = np.max(np.abs(polynomial.polyval(s, coef) - log_expit(s)))
    assert 0.068 < sup_error < 0.069
    np.testing.assert_allclose(coef, [-0.761866, 0.5, -0.0816678], rtol=1e-5)


@pytest.mark.parametrize("function,exact", [("logistic", log_expit), ("exp", np.exp)])
def test_chebyshev_error_decreases_geometrically(function, exact):
    s = np.linspace(-3.0, 3.0, 20_001)
    errors = [np.max(np.abs(polynomial.polyval(s, chebyshev_coefficients(function, m, 3.0))
                            - exact(s))) for m in (2, 6, 10)]
    assert errors[0] > 10 * errors[1] > 100 * errors[2]


def test_chebyshev_callable_and_logistic_symmetry():
    coef = chebyshev_coefficients("logistic", 10, 4.0)
    np.testing.assert_allclose(coef, chebyshev_coefficients(log_expit, 10, 4.0), atol=1e-14)
    assert coef[1] == 0.5 and np.all(coef[3::2] == 0)
    # the leading coefficients alternate in sign: s^(4k) positive, s^(4k+2) negative (§3)
    assert coef[2] < 0 < coef[4] and coef[6] < 0 < coef[8] and coef[10] < 0
    # degree M reproduces polynomials of degree <= M exactly
    np.testing.assert_allclose(chebyshev_coefficients(lambda s: 1 - 2 * s + s**3, 4, 2.5),
                               [1, -2, 0, 1, 0], atol=1e-12)


# --- valid degrees and supported families ---------------------------------------------------------
@pytest.mark.parametrize("degree,reason", [(3, "is degree 2"), (4, "without bound"),
                                           (5, "is degree 4"), (8, "without bound"),
                                           (1, ">= 2"), (22, "exceeds")])
def test_invalid_logistic_degree_rejected_with_reason(degree, reason):
    with pytest.raises(ValueError, match=reason):
        check_pass_degree("logistic", degree)
    X, y = _logistic_data(n=50)
    with pytest.raises(ValueError, match="pass_degree"):
        pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=_prior(3),
                 fit_intercept=True, degree=degree)


def test_valid_degrees():
    assert [check_pass_degree("logistic", m) for m in (2, 6, 10)] == [2, 6, 10]
    assert [check_pass_degree("poisson", m) for m in (2, 4, 6)] == [2, 4, 6]
    with pytest.raises(ValueError, match="odd degree .* unbounded above"):
        check_pass_degree("poisson", 3)
    with pytest.raises(ValueError, match="integer"):
        check_pass_degree("logistic", 2.5)


@pytest.mark.parametrize("family", [PoissonFamily(link="softplus"), GaussianFamily(),
                                    "gaussian"])
def test_unsupported_family(family):
    with pytest.raises(ValueError, match="supports the logistic family and the Poisson"):
        PassGLMStatistics.empty(family, 3)


def test_monomial_cap():
    X, y = _logistic_data(n=20, d=30)
    with pytest.raises(ValueError, match=r"C\(31 \+ 6, 6\) = 2324784 monomial .* "
                                         r"max_monomials=100000"):
        pass_glm_statistics(X, y, LOGISTIC, degree=6)
    with pytest.raises(ValueError, match="max_monomials=50"):
        pass_glm_statistics(X[:, :3], y, LOGISTIC, degree=6, max_monomials=50)
    # degree 2 keeps dense O(p^2) statistics and has no cap
    assert pass_glm_statistics(X, y, LOGISTIC, degree=2).gram.shape == (31, 31)


def test_labels_must_be_encoded():
    X, y = _logistic_data(n=20)
    with pytest.raises(ValueError, match="-1/\\+1"):
        pass_glm_statistics(X, (y > 0).astype(float), LOGISTIC)


# --- the statistics and the surrogate -----------------------------------------------------------
@pytest.mark.parametrize("family,degree", [(LOGISTIC, 6), (POISSON, 4)])
def test_surrogate_equals_polynomial_summed_over_points(family, degree):
    """L(theta) = sum_n w_n [y_n s_n] + sum_n w_n phi_M(c_n . theta), with exact derivatives."""
    X, y = (_logistic_data if family is LOGISTIC else _poisson_data)(n=300, d=2)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    stats = pass_glm_statistics(X, y, family, sample_weight=w, degree=degree, radius=3.0)
    theta = np.array([0.3, -0.2, 0.1])
    s = _design(X) @ theta
    if family is LOGISTIC:
        direct = w @ polynomial.polyval(y * s, chebyshev_coefficients("logistic", degree, 3.0))
    else:
        direct = w @ (y * s - polynomial.polyval(s, chebyshev_coefficients("exp", degree, 3.0))
                      - gammaln(y + 1))
    value, grad, hessian = stats.derivatives(theta)
    np.testing.assert_allclose(value, direct, rtol=1e-12)
    h = 1e-5
    eye = np.eye(3)
    num_grad = [(stats.loglik(theta + h * e) - stats.loglik(theta - h * e)) / (2 * h)
                for e in eye]
    num_hess = [(stats.derivatives(theta + h * e, 1)[1] - stats.derivatives(theta - h * e, 1)[1])
                / (2 * h) for e in eye]
    np.testing.assert_allclose(grad, num_grad, rtol=1e-7, atol=1e-7 * np.abs(grad).max())
    np.testing.assert_allclose(hessian, num_hess, rtol=1e-7, atol=1e-7 * np.abs(hessian).max())


@pytest.mark.parametrize("family,degree", [(LOGISTIC, 2), (LOGISTIC, 6), (POISSON, 2),
                                           (POISSON, 4)])
def test_partial_accumulation_over_10_chunks_equals_one_shot(family, degree):
    X, y = (_logistic_data if family is LOGISTIC else _poisson_data)(n=1000, d=3)
    w = np.random.default_rng(2).uniform(0.0, 3.0, len(y))
    whole = pass_glm_statistics(X, y, family, sample_weight=w, degree=degree)
    streamed = PassGLMStatistics.empty(family, 3, degree=degree)
    merged = None
    for idx in np.array_split(np.arange(len(y)), 10):
        streamed.add(X[idx], y[idx], w[idx])
        part = pass_glm_statistics(X[idx], y[idx], family, sample_weight=w[idx], degree=degree)
        merged = part if merged is None else merged + part
    for stats in (streamed, merged):
        _assert_stats_equal(whole, stats)
        prior = _prior(3)
        a, b = pass_glm_posterior(whole, prior), pass_glm_posterior(stats, prior)
        np.testing.assert_allclose(a.posterior.mean, b.posterior.mean, rtol=1e-10)
        np.testing.assert_allclose(a.posterior.cov, b.posterior.cov, rtol=1e-10)


def test_merge_rejects_incompatible_statistics():
    a = PassGLMStatistics.empty("logistic", 3, degree=2)
    with pytest.raises(ValueError, match="radius"):
        a.merge(PassGLMStatistics.empty("logistic", 3, degree=2, radius=3.0))


@pytest.mark.parametrize("family,degree", [(LOGISTIC, 2), (LOGISTIC, 6), (POISSON, 4)])
def test_integer_weights_equal_repeated_rows(family, degree):
    X, y = (_logistic_data if family is LOGISTIC else _poisson_data)(n=200, d=2)
    w = np.random.default_rng(3).integers(0, 4, len(y))
    options = dict(prior_prec=_prior(2), fit_intercept=True, degree=degree, radius=3.0)
    weighted = pass_glm(X, y, family, sample_weight=w.astype(float), **options)
    repeated = pass_glm(np.repeat(X, w, axis=0), np.repeat(y, w), family, sample_weight=None,
                        **options)
    np.testing.assert_allclose(weighted.posterior.mean, repeated.posterior.mean, rtol=1e-9)
    np.testing.assert_allclose(weighted.posterior.cov, repeated.posterior.cov, rtol=1e-9)
    np.testing.assert_allclose(weighted.log_evidence, repeated.log_evidence, rtol=1e-10)


# --- the posterior ----------------------------------------------------------------------------
def test_degree2_closed_form_is_the_exact_posterior_of_the_surrogate():
    """1-D check against quadrature: the mean, variance and evidence of exp(L) x prior."""
    X, y = _logistic_data(n=100, d=1, norm=1.5)
    prior = np.array([0.5])
    stats = pass_glm_statistics(X, y, LOGISTIC, fit_intercept=False)
    result = pass_glm_posterior(stats, prior)
    mode = result.posterior.mean[0]

    def unnorm(t):
        return np.exp(stats.loglik(np.array([t])) - stats.loglik(np.array([mode]))
                      - 0.5 * prior[0] * t * t)
    lo, hi = mode - 3, mode + 3
    z = integrate.quad(unnorm, lo, hi, epsabs=0, epsrel=1e-12)[0]
    mean = integrate.quad(lambda t: t * unnorm(t), lo, hi, epsrel=1e-12)[0] / z
    var = integrate.quad(lambda t: (t - mean) ** 2 * unnorm(t), lo, hi, epsrel=1e-12)[0] / z
    log_z = np.log(z) + stats.loglik(np.array([mode])) + 0.5 * np.log(prior[0] / (2 * np.pi))
    np.testing.assert_allclose(result.posterior.mean[0], mean, rtol=1e-8)
    np.testing.assert_allclose(result.posterior.cov[0, 0], var, rtol=1e-8)
    np.testing.assert_allclose(result.log_evidence, log_z, rtol=1e-10)


def test_degree2_within_5_percent_of_laplace_when_data_within_radius():
    """Near the Taylor regime: |y x.theta_MAP| <= R with R = 1, degree 2 is within 5%."""
    X, y = _logistic_data(n=2000, d=3, norm=0.25, intercept=0.05, bounded=True)
    prior = _prior(3)
    lap = laplace(X, y, LOGISTIC, sample_weight=np.ones(len(y)), prior_prec=prior,
                  fit_intercept=True)
    margins = y * (_design(X) @ lap.posterior.mean)
    assert np.max(np.abs(margins)) <= 1.0
    result = pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=prior,
                      fit_intercept=True, degree=2, radius=1.0)
    mean_err, var_err = _relative_errors(result, lap)
    assert mean_err < 0.05 and var_err < 0.05


@pytest.mark.parametrize("d", [2, 3])
def test_degree6_within_5_percent_of_laplace_and_closer_than_degree2(d):
    """Default radius 4 on data with |y x.theta_MAP| <= 4: degree 6 meets the 5% target and
    beats degree 2, whose error there is 20-30% (see "Accuracy" in the pass_glm module)."""
    X, y = _logistic_data(n=3000, d=d, norm=1.0, seed=d, bounded=True)
    prior = _prior(d)
    lap = laplace(X, y, LOGISTIC, sample_weight=np.ones(len(y)), prior_prec=prior,
                  fit_intercept=True)
    assert np.max(np.abs(y * (_design(X) @ lap.posterior.mean))) <= 4.0
    errors = {}
    for degree in (2, 6):
        result = pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=prior,
                          fit_intercept=True, degree=degree)
        errors[degree] = _relative_errors(result, lap)
    assert max(errors[6]) < 0.05
    assert errors[6][0] < errors[2][0] / 5 and errors[6][1] < errors[2][1] / 5


def test_poisson_log_link_close_to_laplace_with_degree():
    X, y = _poisson_data(n=2000, d=2)
    prior = _prior(2)
    lap = laplace(X, y, POISSON, sample_weight=np.ones(len(y)), prior_prec=prior,
                  fit_intercept=True)
    assert np.max(np.abs(_design(X) @ lap.posterior.mean)) <= 2.0
    errors = []
    for degree in (2, 4, 6):
        result = pass_glm(X, y, POISSON, sample_weight=None, prior_prec=prior,
                          fit_intercept=True, degree=degree, radius=2.0)
        errors.append(max(_relative_errors(result, lap)))
    assert errors[0] > errors[1] > errors[2] and errors[2] < 0.01
    np.testing.assert_allclose(result.log_evidence, lap.log_evidence, rtol=1e-3)


def test_poisson_degree2_closed_form():
    """Mean and precision of the quadratic surrogate y s - (b0 + b1 s + b2 s^2), by hand."""
    X, y = _poisson_data(n=500, d=2)
    prior = _prior(2)
    b = chebyshev_coefficients("exp", 2, 2.0)
    A = _design(X)
    precision = np.diag(prior) + 2 * b[2] * A.T @ A
    mean = np.linalg.solve(precision, A.T @ y - b[1] * A.sum(axis=0))
    result = pass_glm(X, y, POISSON, sample_weight=None, prior_prec=prior, fit_intercept=True,
                      degree=2, radius=2.0)
    np.testing.assert_allclose(result.posterior.mean, mean, rtol=1e-10)
    np.testing.assert_allclose(result.posterior.precision, precision, rtol=1e-10)


def test_warns_when_linear_predictors_exceed_radius():
    X, y = _logistic_data(n=500, d=2, norm=6.0)
    with pytest.warns(UserWarning, match="beyond pass_radius=1"):
        pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=_prior(2, False),
                 fit_intercept=False, radius=1.0)


def test_without_intercept_and_no_data():
    X, y = _logistic_data(n=300, d=2)
    result = pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=_prior(2, False),
                      fit_intercept=False, degree=6)
    assert result.posterior.mean.shape == (2,) and result.converged
    with pytest.raises(ValueError, match="No data"):
        pass_glm_posterior(PassGLMStatistics.empty(LOGISTIC, 2), _prior(2))


# --- dask: default scheduler and a 2-worker distributed cluster -----------------------------------
def _dask_inputs(X, y, w, chunks):
    da = pytest.importorskip("dask.array")
    # columns split too: the statistics function must rechunk them into one block
    return (da.from_array(X, chunks=(chunks, 2)), da.from_array(y, chunks=chunks + 7),
            da.from_array(w, chunks=chunks))


@pytest.mark.parametrize("family,degree", [(LOGISTIC, 2), (LOGISTIC, 6), (POISSON, 4)])
def test_dask_default_scheduler_equals_in_memory(family, degree):
    X, y = (_logistic_data if family is LOGISTIC else _poisson_data)(n=1500, d=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _dask_inputs(X, y, w, chunks=130)
    expected = pass_glm_statistics(X, y, family, sample_weight=w, degree=degree)
    _assert_stats_equal(expected, pass_glm_statistics_dask(Xd, yd, family, sample_weight=wd,
                                                           degree=degree))
    # y and weights may stay in memory; pass_glm dispatches on the dask X. The pilot sample
    # is the same however the rows are chunked, so "auto" gives the same polynomial too
    options = dict(prior_prec=_prior(3), fit_intercept=True, degree=degree, radius="auto")
    a = pass_glm(X, y, family, sample_weight=w, **options)
    b = pass_glm(Xd, y, family, sample_weight=w, **options)
    np.testing.assert_allclose(a.posterior.mean, b.posterior.mean, rtol=1e-10)
    np.testing.assert_allclose(a.posterior.cov, b.posterior.cov, rtol=1e-10)


def test_dask_on_local_cluster_equals_in_memory(dask_cluster):
    distributed = pytest.importorskip("distributed")
    X, y = _logistic_data(n=4000, d=3)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(y))
    Xd, yd, wd = _dask_inputs(X, y, w, chunks=500)
    options = dict(prior_prec=_prior(3), fit_intercept=True, radius=4.0)
    with distributed.Client(dask_cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        with distributed.get_task_stream(client=client) as tasks:
            for degree in (2, 6):
                expected = pass_glm(X, y, LOGISTIC, sample_weight=w, degree=degree, **options)
                result = pass_glm(Xd, yd, LOGISTIC, sample_weight=wd, degree=degree, **options)
                np.testing.assert_allclose(result.posterior.mean, expected.posterior.mean,
                                           rtol=1e-10)
                np.testing.assert_allclose(result.posterior.cov, expected.posterior.cov,
                                           rtol=1e-10)
                _assert_stats_equal(expected.extra["statistics"], result.extra["statistics"])
    # the per-chunk statistics were computed on the worker processes, each pass a task per
    # worker holding chunks
    chunk_tasks = [t for t in tasks.data if "_chunk_summaries" in str(t["key"])]
    assert 2 <= len(chunk_tasks) <= 2 * 2
    assert {t["worker"] for t in chunk_tasks} <= set(dask_cluster.scheduler_info["workers"])


def test_auto_polynomial_is_accurate_on_rare_positives_and_the_diagnostic_warns():
    """Issue 11.7: with 0.3% positives the fixed [-4, 4] put the mean tens of Laplace sds off
    without a word; radius="auto" is within one sd, and the measured diagnostic tracks the
    actual error (and warns) for the fixed interval."""
    from skcoreset._inference.pass_glm import PassGLMAccuracyWarning
    from skcoreset.datasets import make_logistic_regression

    X, y01 = make_logistic_regression(20_000, 4, intercept=-6.0, random_state=1)
    y = np.where(y01 > 0, 1.0, -1.0)
    options = dict(sample_weight=np.ones(len(y)), prior_prec=_prior(4), fit_intercept=True)
    lap = laplace(X, y, LOGISTIC, **options).posterior
    with warnings.catch_warnings():
        warnings.simplefilter("error", PassGLMAccuracyWarning)
        auto = pass_glm(X, y, LOGISTIC, **options)
    assert np.max(np.abs(auto.posterior.mean - lap.mean) / lap.std) < 1.0
    with pytest.warns(PassGLMAccuracyWarning, match="standard deviations"):
        fixed = pass_glm(X, y, LOGISTIC, radius=4.0, **options)
    actual = np.max(np.abs(fixed.posterior.mean - lap.mean) / lap.std)
    assert actual > 5 and 0.5 < fixed.extra["mean_error_sd"] / actual < 2


@pytest.mark.parametrize("unit_weights", [True, False])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gram_with_extra_columns_is_the_gram_of_the_augmented_design(
        unit_weights, fit_intercept):
    # the statistics' one pass: gram, A.T @ (w r) and A.T @ w from one weighted Gram
    from skcoreset._design import weighted_gram
    rng = np.random.default_rng(5)
    X = rng.normal(size=(9_000, 4))
    c = np.ones(9_000) if unit_weights else rng.exponential(size=9_000)
    extra = (rng.normal(size=9_000), np.ones(9_000))
    design = np.column_stack([X, np.ones(9_000)] if fit_intercept else [X])
    augmented = np.column_stack([design, *extra])
    exact = augmented.T @ (c[:, None] * augmented)
    full = weighted_gram(X, c, fit_intercept, extra=extra)
    np.testing.assert_allclose(full, exact, rtol=1e-12, atol=1e-9)
    p = design.shape[1]
    np.testing.assert_array_equal(full[:p, :p], weighted_gram(X, c, fit_intercept))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_unit_weight_gram_without_block_copies_over_several_blocks(
        monkeypatch, order, fit_intercept):
    # unit weights take the path without block copies (syrk of X's blocks, gemv for the
    # other columns); blocks of 1,000 rows here, the last one partial
    import skcoreset._design as design
    monkeypatch.setattr(design, "_MIN_BLOCK_ROWS", 1_000)
    monkeypatch.setattr(design, "_BLOCK_BYTES", 8)
    rng = np.random.default_rng(6)
    X = np.asarray(rng.normal(size=(9_500, 5)), order=order)
    extra = (rng.normal(size=9_500), (rng.random(9_500) < 0.3).astype(float), np.ones(9_500))
    augmented = np.column_stack(([X, np.ones(9_500)] if fit_intercept else [X]) + list(extra))
    full = design.weighted_gram(X, np.ones(9_500), fit_intercept, extra=extra)
    np.testing.assert_allclose(full, augmented.T @ augmented, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(full, full.T)
    # the weighted path (copies of scaled blocks) agrees
    weighted = design.weighted_gram(X, np.full(9_500, 1.0 + 1e-15), fit_intercept, extra=extra)
    np.testing.assert_allclose(full, weighted, rtol=1e-12, atol=1e-9)
    # single-precision X is accumulated in double precision (the copying path)
    X32 = X.astype(np.float32)
    exact32 = np.column_stack([X32.astype(float), np.ones(9_500)])
    np.testing.assert_allclose(design.weighted_gram(X32, np.ones(9_500), True),
                               exact32.T @ exact32, rtol=1e-12, atol=1e-9)
    # a non-finite entry shows on its column's diagonal entry
    X_bad = X.copy(order=order)
    X_bad[7_777, 2] = np.inf
    with np.errstate(invalid="ignore"):
        assert not np.isfinite(design.weighted_gram(X_bad, np.ones(9_500), fit_intercept)[2, 2])


def test_non_finite_X_outside_the_pilot_rows_is_caught_before_anything_is_added():
    from skcoreset import BayesianLogisticRegression
    X, y = logistic_data(3_000, [0.5, -0.3, 0.2], seed=2, labels=(-1, 1))
    stats = pass_glm_statistics(X[:100], y[:100], LogisticFamily())
    before = (stats.n_samples, stats.gram.copy(), stats.linear.copy())
    for bad in (np.nan, np.inf):
        X_bad = X.copy()
        X_bad[1_234, 1] = bad
        with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
            stats.add(X_bad, y, np.where(np.arange(3_000) == 1_234, 0.0, 1.0))
        assert stats.n_samples == before[0]
        np.testing.assert_array_equal(stats.gram, before[1])
        np.testing.assert_array_equal(stats.linear, before[2])
        with pytest.raises(ValueError, match="Input X contains NaN or infinity"):
            BayesianLogisticRegression(method="pass_glm").fit(X_bad, y)


@pytest.mark.parametrize("model, degree", [("logistic", 2), ("logistic", 6), ("poisson", 4)])
def test_unit_weights_as_none_agree_with_explicit_weights(model, degree):
    # sample_weight=None skips the weight passes (statistics, pilot rows); the result is that
    # of explicit unit weights, and half of that of weights 2
    rng = np.random.default_rng(8)
    X = rng.normal(size=(6_000, 3)) / 2
    y = (np.where(rng.random(6_000) < 0.4, 1.0, -1.0) if model == "logistic"
         else rng.poisson(1.5, size=6_000).astype(float))
    family = LOGISTIC if model == "logistic" else POISSON
    none = pass_glm_statistics(X, y, family, degree=degree)
    for weight, factor in ((np.ones(6_000), 1.0), (np.full(6_000, 2.0), 0.5)):
        other = pass_glm_statistics(X, y, family, degree=degree, sample_weight=weight)
        for name in ("gram", "linear", "moment1", "sum_weight", "constant"):
            np.testing.assert_allclose(getattr(none, name), factor * getattr(other, name),
                                       rtol=1e-12)
        for m, moments in none.higher.items():
            np.testing.assert_allclose(moments, factor * other.higher[m], rtol=1e-12)
    from skcoreset._inference.pass_glm import PilotSample
    none = PilotSample.of_rows(model, X, y, None, capacity=1000).split(500, True)
    ones = PilotSample.of_rows(model, X, y, np.ones(6_000), capacity=1000).split(500, True)
    for rows, rows_ones in zip(none, ones):
        np.testing.assert_array_equal(rows.X, rows_ones.X)
        np.testing.assert_array_equal(rows.sample_weight, rows_ones.sample_weight)


@pytest.mark.parametrize("d", [8, 60])  # float64 / float32 Hessians steer the steps
@pytest.mark.parametrize("model", ["logistic", "poisson"])
def test_pilot_mode_is_within_a_fraction_of_a_posterior_sd_of_the_exact_one(model, d):
    # the pilot is solved to half a decrement of PILOT_TOL nats without an exact
    # confirmation: sqrt(2 * 0.01) = 0.14 sd of its own (full-weight) posterior at most
    from skcoreset._inference.pass_glm import PILOT_ROWS, PILOT_TOL, PilotSample, pilot_fit
    family = LOGISTIC if model == "logistic" else POISSON
    X, y = (_logistic_data(n=60_000, d=d, norm=2.0, intercept=-2.0) if model == "logistic"
            else _poisson_data(n=60_000, d=d))
    prior = _prior(d)
    rows = PilotSample.of_rows(model, X, y).split(PILOT_ROWS, True)[0]
    pilot = pilot_fit(rows, family, prior_prec=prior)
    exact = laplace(pilot.X, pilot.y, family, sample_weight=pilot.sample_weight,
                    prior_prec=prior, fit_intercept=True, tol=1e-12).posterior
    diff = pilot.theta - exact.mean
    assert 0 < diff @ exact.precision @ diff <= 2 * 2 * PILOT_TOL
    assert np.isclose(pilot.sample_weight.sum(), 60_000)


def test_few_distinct_linear_predictors_take_the_taylor_polynomial():
    from skcoreset._inference.pass_glm._pilot import _more_distinct_than
    for values, k, expected in [([], 2, False), ([1.0], 0, True), ([3.0, 3.0], 1, False),
                                ([3.0, 1.0, 3.0], 1, True), ([3.0, 1.0, 3.0], 2, False),
                                ([1.0, 2.0, 3.0, 1.0], 2, True)]:
        assert _more_distinct_than(np.array(values), k) is expected
        assert expected == (len(np.unique(values)) > k)


def test_accuracy_diagnostic_from_float32_hessian_matches_float64():
    # the diagnostic's Hessian is accumulated from float32 block products; the offsets agree
    # with the float64 Hessian's to ~1e-6 relative
    from scipy import linalg
    from skcoreset._inference._common import LogPosterior
    from skcoreset._inference.pass_glm import PassGLMAccuracyWarning, mean_error_estimate
    X, y = _logistic_data(n=20_000, d=5, norm=2.0, intercept=-1.0)
    prior = _prior(5)
    with pytest.warns(PassGLMAccuracyWarning):
        result = pass_glm(X, y, LOGISTIC, sample_weight=None, prior_prec=prior,
                          fit_intercept=True, radius=4.0)
    stats, pilot, theta = (result.extra["statistics"], result.extra["held_out"],
                           result.posterior.mean)
    offset = mean_error_estimate(stats, theta, prior, pilot)
    # float64 reference: the same formula with the exact Hessian
    w = pilot.sample_weight * (stats.sum_weight / pilot.sample_weight.sum())
    s = _design(pilot.X) @ theta
    slope = polynomial.polyder(-stats.coef)
    g = _design(pilot.X).T @ (w * (polynomial.polyval(s, slope) - 1 / (1 + np.exp(-s))))
    H = LogPosterior(pilot.X, pilot.y, LOGISTIC, w, prior, True).neg_hessian(s)
    cov = linalg.inv(H)
    expected = cov @ g / np.sqrt(np.diag(cov))
    assert np.max(np.abs(offset)) > 1  # the fixed interval is off here
    np.testing.assert_allclose(offset, expected, rtol=1e-4)


# --- the polynomial chosen after the rows: pilot sample, deferred statistics, held-out rows --
def test_pilot_sample_is_the_same_however_the_rows_arrive():
    """Keys hash the row numbers: one sample of all rows, rows added block by block (a
    stream) and samples of chunks merged in any grouping (a tree of tasks) agree."""
    from skcoreset._inference.pass_glm import PilotSample

    X, y = _logistic_data(n=5000, d=3, intercept=-2.0)
    w = np.random.default_rng(3).uniform(0.0, 2.0, len(y))
    w[::7] = 0.0  # rows standing for nothing are never sampled
    whole = PilotSample.of_rows("logistic", X, y, w, capacity=400)
    stream = PilotSample.empty("logistic", 3, capacity=400)
    for start in range(0, 5000, 700):
        rows = slice(start, start + 700)
        stream = stream.add(X[rows], y[rows], w[rows], offset=start)
    chunks = [PilotSample.of_rows("logistic", X[a:b], y[a:b], w[a:b], offset=a, capacity=400)
              for a, b in [(0, 1300), (1300, 1400), (1400, 5000)]]
    tree = chunks[2] + (chunks[1] + chunks[0])
    for other in (stream, tree):
        for name in ("index", "X", "y", "weight"):
            for mine, theirs in zip(getattr(whole, name), getattr(other, name)):
                np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(whole.counts, other.counts)
        np.testing.assert_allclose(whole.totals, other.totals, rtol=1e-12)
    positive = (y > 0) & (w > 0)
    assert whole.counts.tolist() == [positive.sum(), ((y < 0) & (w > 0)).sum()]
    assert np.all(w[np.concatenate(whole.index)] > 0)
    # pilot: the rare class (positives, ~15 %) up to half; held-out: the other sampled rows;
    # both stand for every class's total weight
    pilot, held_out = whole.split(300, True)
    assert np.sum(pilot.y > 0) == 150 and np.sum(pilot.y < 0) == 150
    assert np.sum(held_out.y > 0) == 250 and np.sum(held_out.y < 0) == 400 - 150
    for rows in (pilot, held_out):
        for label in (1, -1):
            np.testing.assert_allclose(rows.sample_weight[rows.y == label].sum(),
                                       w[y == label].sum(), rtol=1e-12)
    # a class held whole is held out whole: its sums are exact
    _, exact = PilotSample.of_rows("logistic", X, y, w, capacity=5000).split(300, True)
    assert len(exact.y) == np.count_nonzero(w > 0) and np.all(exact.fractions == 1.0)


@pytest.mark.parametrize("family, degree, radius", [(LOGISTIC, 2, 4.0), (LOGISTIC, 6, 3.0),
                                                    (POISSON, 4, 2.0)])
def test_statistics_do_not_depend_on_the_polynomial(family, degree, radius):
    """The moment sums T_m = sum_n w_n a_n^m, the exact linear term and constant involve no
    coefficient: statistics summed before the polynomial is chosen equal those summed with
    it (here the degree-2 ones are T_0, T_1, T_2, sum_n w_n y_n a_n and sum_n w_n log y_n!)."""
    X, y = (_logistic_data if family is LOGISTIC else _poisson_data)(n=1500, d=2)
    w = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    fixed = pass_glm_statistics(X, y, family, sample_weight=w, degree=degree, radius=radius)
    deferred = pass_glm_statistics(X, y, family, sample_weight=w, degree=degree, radius=None)
    assert deferred.coef is None and set(deferred.higher) == set(range(3, degree + 1))
    with pytest.raises(ValueError, match="No polynomial"):
        deferred.loglik(np.zeros(3))
    chosen = deferred.with_polynomial(radius=radius)
    theta = np.array([0.3, -0.2, 0.1])
    for a, b in zip(fixed.derivatives(theta), chosen.derivatives(theta)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for m in fixed.higher:
        np.testing.assert_allclose(fixed.higher[m], chosen.higher[m], rtol=1e-12)
    # another polynomial, any time: the coefficients only enter the evaluation
    coef = deferred.with_polynomial(radius=2 * radius).coef
    again = chosen.with_polynomial(coef=coef)
    np.testing.assert_allclose(again.loglik(theta),
                               deferred.with_polynomial(radius=2 * radius).loglik(theta))
    if degree == 2:
        with pytest.raises(ValueError, match="degree"):
            fixed.with_polynomial(coef=np.r_[coef, 0.0, 0.0, -1.0])


def test_stream_chooses_the_polynomial_of_all_its_rows():
    """Ten blocks of 2,000 rows: the stream's final polynomial is the one fit takes on all
    20,000 rows (pilot fit warm-started at the previous block's), not the first block's."""
    from skcoreset import BayesianLogisticRegression
    from skcoreset.datasets import make_logistic_regression

    X, y = make_logistic_regression(20_000, n_features=10, random_state=0)
    fit = BayesianLogisticRegression(method="pass_glm").fit(X, y)
    stream = BayesianLogisticRegression(method="pass_glm")
    polynomials = []
    for rows in np.array_split(np.arange(20_000), 10):
        stream.partial_fit(X[rows], y[rows], classes=[0, 1])
        polynomials.append(stream._pass_stream.statistics.coef)
    sd = BayesianLogisticRegression().fit(X, y).posterior_.std
    assert np.max(np.abs(stream.posterior_.mean - fit.posterior_.mean) / sd) < 0.02
    np.testing.assert_allclose(polynomials[-1], fit._pass_stream.statistics.coef, rtol=1e-3)
    assert not np.allclose(polynomials[0], polynomials[-1], rtol=1e-3)
    # the statistics are those of fit: the same rows, summed once
    _assert_stats_equal(stream._pass_stream.statistics, fit._pass_stream.statistics)


def test_held_out_estimate_and_its_standard_error_bound_the_actual_error():
    """With held-out rows the estimate is unbiased, and its standard error covers its
    sampling noise (which grows like sqrt(N / held-out rows)): the warning fires when the
    estimate plus two standard errors exceeds one sd, and a class held whole is exact."""
    from skcoreset._inference.pass_glm import (PassGLMAccuracyWarning, WeightedRows,
                                               mean_error_estimate)

    X, y = _logistic_data(n=40_000, d=4, norm=2.5, intercept=-1.0, seed=4)
    options = dict(sample_weight=None, prior_prec=_prior(4), fit_intercept=True)
    with pytest.warns(PassGLMAccuracyWarning, match="may be up to"):
        result = pass_glm(X, y, LOGISTIC, pilot_rows=1000, **options)
    stats, held_out, theta = (result.extra["statistics"], result.extra["held_out"],
                              result.posterior.mean)
    assert len(held_out.y) == 2 * 2000 - 1000  # 2 x 1000 per class, less the pilot's
    estimate, se = mean_error_estimate(stats, theta, _prior(4), held_out, return_se=True)
    exact = mean_error_estimate(stats, theta, _prior(4),
                                WeightedRows(X, y, np.ones(len(y)), True), return_se=False)
    lap = laplace(X, y, LOGISTIC, **{**options, "sample_weight": np.ones(len(y))}).posterior
    actual = (lap.mean - theta) / lap.std
    np.testing.assert_allclose(exact, actual, atol=0.05)  # one Newton step is enough
    assert np.all(se > 0) and np.all(np.abs(estimate - exact) < 4 * se)
    assert result.extra["mean_error_bound_sd"] >= np.max(np.abs(actual))
    # all rows held: the estimate is exact and its standard error zero
    whole = pass_glm(X[:3000], y[:3000], LOGISTIC, **options)
    assert whole.extra["mean_error_bound_sd"] == pytest.approx(whole.extra["mean_error_sd"])
