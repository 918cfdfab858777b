"""exact_kl against divergences computed by quadrature, MCMC on all rows and direct sums."""

import warnings

import numpy as np
import pytest
from scipy import integrate, sparse, stats
from scipy.special import gammaln, log_expit, logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, UniformCoreset)
from skcoreset._backend import InMemoryRows
from skcoreset._inference import importance_summary, log_joint, pareto_smoothed, potentials
from skcoreset.exceptions import ImportanceSamplingWarning
from skcoreset.families import NegativeBinomialFamily, make_family
from skcoreset.metrics import ExactKL, _exact, exact_kl
from skcoreset.pipeline import Pipeline

from ..conftest import logistic_data, poisson_data


def _logistic_log_post(thetas, X, y, w, prior_prec):
    """``log prior + sum_n w_n log sigmoid(y_n eta_n)`` on a grid of thetas (G, p), y in
    {0, 1}, intercept last: the direct sum, independent of the package's kernels."""
    eta = X @ thetas[:, :-1].T + thetas[:, -1] if X.shape[1] < thetas.shape[1] \
        else X @ thetas.T
    signs = np.where(y == 1, 1.0, -1.0)[:, None]
    return w @ log_expit(signs * eta) - 0.5 * (thetas**2) @ prior_prec


def _gaussian_kl_by_quadrature(log_p, m, s, half_width):
    """``(KL(N(m, s^2) || p), Z, top)`` for the unnormalised log density ``log_p`` of one
    parameter, by quadrature over ``m +- half_width * s``: ``p = exp(log_p - top) / Z``."""
    lo, hi, top = m - half_width * s, m + half_width * s, log_p(m)
    Z = integrate.quad(lambda t: np.exp(log_p(t) - top), lo, hi, limit=200)[0]

    def integrand(t):
        log_q = -0.5 * ((t - m) / s) ** 2 - np.log(s * np.sqrt(2 * np.pi))
        return np.exp(log_q) * (log_q - (log_p(t) - top - np.log(Z)))

    return integrate.quad(integrand, lo, hi, limit=200)[0], Z, top


def test_laplace_kl_matches_quadrature_in_one_dimension():
    # ten counts, one coefficient, no intercept: a skewed posterior, Laplace visibly off
    X, y = poisson_data(10, [1.0], seed=3)
    reg = BayesianPoissonRegression(fit_intercept=False, prior_scale=3.0).fit(X, y)
    q = reg.posterior_
    m, s = float(q.mean[0]), float(q.std[0])

    def log_p(t):  # the direct sum: log prior + sum_n (y_n x_n t - exp(x_n t)), up to a constant
        return float(np.sum(y * X[:, 0] * t - np.exp(X[:, 0] * t)) - t * t / 18)

    expected, Z, top = _gaussian_kl_by_quadrature(log_p, m, s, 15)
    lo, hi = m - 15 * s, m + 15 * s
    result = exact_kl(reg, X, y, n_draws=4000, random_state=1)
    assert isinstance(result, ExactKL) and result.reliable and result.n_draws == 4000
    assert expected > 0.003  # not a trivial case
    assert abs(result.kl - expected) < 4 * result.kl_se + 5e-4
    exact_mean = integrate.quad(lambda t: t * np.exp(log_p(t) - top), lo, hi)[0] / Z
    assert result.mean[0] == pytest.approx(exact_mean, abs=0.05 * result.sd[0])
    assert result.max_mean_error_sd == pytest.approx(abs(m - exact_mean) / result.sd[0],
                                                     abs=0.05)


def test_binary_offset_kl_matches_quadrature_in_one_dimension():
    # cloglog with a known log(time at risk) per row: the Laplace fit of a slightly different
    # offset, measured against the exact posterior with the rows' own offsets
    from skcoreset import BayesianBinaryRegression

    rng = np.random.default_rng(4)
    x, offset = rng.normal(size=60), rng.uniform(-2.0, 1.0, 60)
    y = (rng.random(60) < -np.expm1(-np.exp(0.8 * x + offset))).astype(int)
    reg = BayesianBinaryRegression(link="cloglog", fit_intercept=False, prior_scale=3.0).fit(
        x[:, None], y, offset=0.85 * offset)
    m, s = float(reg.posterior_.mean[0]), float(reg.posterior_.std[0])

    def log_p(t):  # log prior + sum_n log P(y_n), P(1) = 1 - exp(-exp(x t + offset))
        eta = x * t + offset
        return float(np.sum(np.where(y == 1, np.log(-np.expm1(-np.exp(eta))), -np.exp(eta)))
                     - t * t / 18)

    expected = _gaussian_kl_by_quadrature(log_p, m, s, 12)[0]
    result = exact_kl(reg, x[:, None], y, offset=offset, n_draws=4000, random_state=1)
    assert expected > 0.01 and result.reliable
    assert abs(result.kl - expected) < 4 * result.kl_se + 1e-3
    with pytest.raises(ValueError, match="exposure is for count models"):
        exact_kl(reg, x[:, None], y, exposure=np.ones(60))


def _grid_kl(log_q, log_p, area):
    """KL(q || p) of two unnormalised log densities on the same grid (cell area ``area``)."""
    lq = log_q - (logsumexp(log_q) + np.log(area))
    lp = log_p - (logsumexp(log_p) + np.log(area))
    return float(np.sum(np.exp(lq) * (lq - lp)) * area)


def _grid(center, half_width, n=121):
    axes = [np.linspace(c - h, c + h, n) for c, h in zip(center, half_width)]
    mesh = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(center))
    return mesh, np.prod([a[1] - a[0] for a in axes])


def test_coreset_pipeline_with_mcmc_matches_grid_integration():
    X, y = logistic_data(600, [1.0], -0.5, seed=1)
    pipe = Pipeline([
        ("coreset", UniformCoreset(M=500, random_state=0)),
        ("clf", BayesianLogisticRegression(method="mcmc", n_draws=1000, random_state=0)),
    ], exact_correction=False).fit(X, y)
    result = exact_kl(pipe, X, y)
    coreset = pipe.named_steps["coreset"]
    prec = np.array([1.0, 1 / 100])
    post = pipe.named_steps["clf"].posterior_
    thetas, area = _grid(post.mean, 8 * post.std)
    log_q = _logistic_log_post(thetas, X[coreset.sample_indices_], y[coreset.sample_indices_],
                               coreset.sample_weight_, prec)
    log_p = _logistic_log_post(thetas, X, y, np.ones(len(y)), prec)
    expected = _grid_kl(log_q, log_p, area)
    assert expected > 0.02 and result.reliable
    assert abs(result.kl - expected) < 4 * result.kl_se + 0.01


def test_mcmc_on_all_rows_is_the_exact_posterior():
    X, y = logistic_data(300, [1.0, -1.0], seed=2)
    clf = BayesianLogisticRegression(method="mcmc", n_draws=300, random_state=0).fit(X, y)
    for fit_rows in (None, (X, y), (X, y, np.ones(len(y)))):
        result = exact_kl(clf, X, y, fit_rows=fit_rows)
        assert result.kl == pytest.approx(0.0, abs=1e-9)
        assert result.pareto_k < 0.3 and result.reliable
        assert result.max_mean_error_sd < 1e-6
    # fitted on half the rows: q is the posterior of those, and the full data's is narrower
    half = BayesianLogisticRegression(method="mcmc", n_draws=600, random_state=0).fit(
        X[:150], y[:150])
    measured = exact_kl(half, X, y, fit_rows=(X[:150], y[:150]))
    assert measured.kl > 0.3 and measured.reliable


def test_heavy_mismatch_warns():
    X, y = logistic_data(5000, [1.0, 0.5], seed=4)
    pipe = Pipeline([("coreset", UniformCoreset(M=30, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    with pytest.warns(ImportanceSamplingWarning, match="k-hat"):
        result = exact_kl(pipe, X, y, n_draws=500, random_state=0)
    assert not result.reliable and result.pareto_k > result.pareto_k_threshold


def test_weights_without_a_tail_are_reliable_whatever_their_k_hat():
    rng = np.random.default_rng(0)
    # a Cauchy tail in the seventh digit of the weights: all within 0.1 % of each other
    log_ratio = 1e-6 * np.clip(rng.standard_cauchy(1000), -1e3, 1e3)
    summary = importance_summary(rng.normal(size=(1000, 2)), np.zeros(1000), log_ratio)
    assert summary.pareto_k > 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _exact._result(summary, 1000).reliable
    spread = importance_summary(rng.normal(size=(1000, 2)), np.zeros(1000), 1e3 * log_ratio)
    with pytest.warns(ImportanceSamplingWarning):
        assert not _exact._result(spread, 1000).reliable


def test_negative_binomial_with_sampled_alpha_reaches_the_full_posterior():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 1))
    mu = np.exp(0.5 * X[:, 0] + 1.0)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        half = BayesianNegativeBinomialRegression(method="mcmc", n_draws=600,
                                                  random_state=0).fit(X[:200], y[:200])
        full = BayesianNegativeBinomialRegression(method="mcmc", n_draws=800,
                                                  random_state=1).fit(X, y)
    assert hasattr(half, "alpha_samples_")
    result = exact_kl(half, X, y, fit_rows=(X[:200], y[:200]))
    assert result.kl > 0.1 and result.reliable and result.mean.shape == (3,)
    # the weighted draws of half the rows are NUTS's draws of all rows, alpha included
    reference = np.column_stack([full.posterior_samples_, np.log(full.alpha_samples_)])
    np.testing.assert_allclose(result.mean, reference.mean(axis=0),
                               atol=0.2 * reference.std(axis=0).max())
    np.testing.assert_allclose(result.sd, reference.std(axis=0), rtol=0.25)


def test_log_joint_with_alpha_draws_is_the_direct_sum():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 2)), rng.poisson(3.0, size=50).astype(float)
    thetas, log_alpha = rng.normal(size=(6, 3)) * 0.3, rng.normal(size=6) * 0.5 - 1.0
    offset = rng.normal(size=50) * 0.2
    prec = np.array([1.0, 1.0, 0.01])
    got = log_joint(InMemoryRows(X, y, np.ones(50), offset), NegativeBinomialFamily(alpha=1.0),
                    thetas, prec, True, log_alpha=log_alpha)
    r = np.exp(-log_alpha)
    mu = np.exp(X @ thetas[:, :2].T + thetas[:, 2] + offset[:, None])
    yc = y[:, None]
    direct = (gammaln(yc + r) - gammaln(r) - gammaln(yc + 1) + r * np.log(r / (r + mu))
              + yc * np.log(mu / (r + mu))).sum(axis=0)
    direct += -0.5 * (thetas**2) @ prec - 0.5 * (log_alpha / 10.0) ** 2
    np.testing.assert_allclose(got, direct, rtol=1e-10)


@pytest.mark.parametrize("model", ["logistic", "probit", "poisson", "negative_binomial"])
def test_log_joint_of_every_family_is_the_direct_sum(model):
    """Against scipy.stats' log densities, up to one constant over the draws (the kernels
    drop the rows' terms without the parameters)."""
    rng = np.random.default_rng(2)
    X, w = rng.normal(size=(80, 2)), rng.uniform(0.5, 2.0, 80)
    thetas = rng.normal(size=(7, 3)) * 0.4
    eta = X @ thetas[:, :2].T + thetas[:, 2]
    if model in ("logistic", "probit"):
        y = np.where(rng.random(80) < 0.4, 1.0, -1.0)
        cdf = stats.logistic.logcdf if model == "logistic" else stats.norm.logcdf
        direct = cdf(y[:, None] * eta)
    elif model == "poisson":
        y = rng.poisson(2.0, 80).astype(float)
        direct = stats.poisson.logpmf(y[:, None], np.exp(eta))
    else:
        y = rng.poisson(2.0, 80).astype(float)
        r = 1 / 0.7
        direct = stats.nbinom.logpmf(y[:, None], r, r / (r + np.exp(eta)))
    prec = np.array([1.0, 2.0, 0.1])
    family = make_family(model, alpha=0.7)
    got = log_joint(InMemoryRows(X, y, w), family, thetas, prec, True)
    expected = w @ direct - 0.5 * (thetas**2) @ prec
    np.testing.assert_allclose(got - got[0], expected - expected[0], atol=1e-9)


def test_storage_and_chunks_do_not_change_the_estimate(tmp_path, monkeypatch):
    X, y = logistic_data(2000, [1.0, -0.5, 0.3], seed=5)
    clf = BayesianLogisticRegression().fit(X, y)
    dense = exact_kl(clf, X, y, n_draws=200, random_state=0)
    path = tmp_path / "X.dat"
    mapped = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    monkeypatch.setattr(potentials, "_CHUNK_ELEMENTS", 200 * 64)  # 32 chunks of rows
    for other in (mapped, sparse.csr_matrix(X)):
        got = exact_kl(clf, other, y, n_draws=200, random_state=0)
        assert got.kl == pytest.approx(dense.kl, rel=1e-9)
        np.testing.assert_allclose(got.mean, dense.mean, rtol=1e-9)
    da = pytest.importorskip("dask.array")
    lazy = exact_kl(clf, da.from_array(X, chunks=(300, 3)), da.from_array(y, chunks=300),
                    n_draws=200, random_state=0)
    assert lazy.kl == pytest.approx(dense.kl, rel=1e-9)


def test_pipeline_transforms_reach_the_estimator():
    X, y = logistic_data(1000, [1.0, -1.0], seed=10)
    X = 3.0 * X + 5.0
    pipe = Pipeline([("scale", StandardScaler()),
                     ("coreset", UniformCoreset(M=900, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    got = exact_kl(pipe, X, y, n_draws=300, random_state=0)
    direct = exact_kl(pipe.named_steps["clf"], pipe.named_steps["scale"].transform(X), y,
                      n_draws=300, random_state=0)
    assert got.kl == pytest.approx(direct.kl, rel=1e-12) and got.kl > 0.01


def test_exposure_and_weights_as_in_fit():
    X, y = poisson_data(500, [0.3, -0.2], 0.5, seed=6)
    exposure = np.random.default_rng(7).uniform(0.5, 2.0, len(y))
    y = np.random.default_rng(8).poisson(exposure * np.exp(X @ [0.3, -0.2] + 0.5))
    reg = BayesianPoissonRegression().fit(X, y, exposure=exposure)
    counts = exact_kl(reg, X, y, exposure=exposure, n_draws=300, random_state=0)
    rates = exact_kl(reg, X, y / exposure, sample_weight=exposure, n_draws=300,
                     random_state=0)
    assert counts.kl == pytest.approx(rates.kl, rel=1e-9)
    # the negative binomial model takes the exposure as an offset
    nb = BayesianNegativeBinomialRegression(alpha=0.5).fit(X, y, offset=np.log(exposure))
    by_offset = exact_kl(nb, X, y, offset=np.log(exposure), n_draws=300, random_state=0)
    by_exposure = exact_kl(nb, X, y, exposure=exposure, n_draws=300, random_state=0)
    assert by_offset.kl == pytest.approx(by_exposure.kl, rel=1e-9)
    assert by_offset.reliable and by_offset.kl < 0.05  # Laplace at 500 rows, d = 3


def test_bad_inputs_raise_clear_errors():
    X, y = logistic_data(200, [1.0], seed=9)
    with pytest.raises(NotFittedError):
        exact_kl(BayesianLogisticRegression(), X, y)
    with pytest.raises(NotFittedError):
        exact_kl(Pipeline([("c", UniformCoreset(M=20)), ("m", BayesianLogisticRegression())]),
                 X, y)
    with pytest.raises(TypeError, match="Bayesian GLM"):
        exact_kl(LogisticRegression().fit(X, y), X, y)
    with pytest.raises(TypeError, match="coreset constructor"):
        exact_kl(UniformCoreset(M=20).fit(X, y), X, y)
    clf = BayesianLogisticRegression().fit(X, y)
    for n_draws in (1, 2.5, "100"):
        with pytest.raises(ValueError, match="n_draws"):
            exact_kl(clf, X, y, n_draws=n_draws)
    with pytest.raises(ValueError, match="features"):
        exact_kl(clf, np.hstack([X, X]), y)
    with pytest.raises(ValueError, match="entries"):
        exact_kl(clf, X, y[:-1])
    with pytest.raises(ValueError, match="fit_rows"):
        exact_kl(clf, X, y, fit_rows=(X, y))
    with pytest.raises(ValueError, match="count models"):
        exact_kl(clf, X, y, exposure=np.ones(len(y)))
    with pytest.raises(ValueError, match="offset"):
        exact_kl(clf, X, y, offset=np.full(len(y), np.nan))
    mcmc = BayesianLogisticRegression(method="mcmc", n_draws=100, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="fit_rows"):
        exact_kl(mcmc, X, y, fit_rows=[X, y])
    pipe = Pipeline([("c", UniformCoreset(M=50, random_state=0)),
                     ("m", BayesianLogisticRegression())]).fit(X, y)
    with pytest.raises(ValueError, match="coreset was built from"):
        exact_kl(Pipeline([("c", pipe.named_steps["c"]),
                           ("m", mcmc)]), X[::-1].copy(), y)


@pytest.mark.parametrize("model", ["logistic", "poisson"])
def test_float32_pass_is_the_float64_sum_within_its_bound(model):
    """The float32 pass (differences to the draws' mean) against the direct float64 sum,
    on heavy-tailed rows whose log-likelihood terms reach thousands of nats (rounding them
    in float32 would cost about 1e-4 nats each): within 1e-3 nats over 20,000 rows. A
    logistic row whose differences could overflow float32's exp() is summed in float64."""
    rng = np.random.default_rng(3)
    n = 20000
    X = np.exp(rng.normal(size=(n, 2)))  # log-normal features
    center = np.array([0.1, 0.08, 1.0])
    if model == "logistic":
        X[0] = [1e4, 1e4]  # draws 200 apart in its linear predictor: a float64 chunk
    w = rng.uniform(0.5, 2.0, n)
    spread = [0.003, 0.003, 0.01] if model == "logistic" else [3e-4, 3e-4, 3e-3]
    thetas = center + rng.normal(size=(50, 3)) * spread
    eta = X @ thetas[:, :2].T + thetas[:, 2]
    if model == "logistic":
        y = np.where(rng.random(n) < 0.3, 1.0, -1.0)
        y[0] = -1.0
        direct = log_expit(y[:, None] * eta)
    else:
        y = rng.poisson(np.exp(X @ center[:2] + center[2])).astype(float)
        direct = y[:, None] * eta - np.exp(eta)
        assert np.max(np.abs(direct)) > 1e3
    prec = np.array([1.0, 1.0, 0.01])
    expected = w @ direct - 0.5 * (thetas**2) @ prec
    family = make_family(model)
    rows = InMemoryRows(X, y, w)
    got = log_joint(rows, family, thetas, prec, True, dtype=np.float32)
    # draws far apart in log density (a plain float32 sum is 0.09-0.18 nats off here)
    assert np.ptp(expected) > 2.0
    np.testing.assert_allclose(got - got[0], expected - expected[0], atol=1e-3)


def test_float32_option_of_exact_kl():
    X, y = logistic_data(3000, [1.0, -0.5, 0.3], -3.0, seed=7)
    clf = BayesianLogisticRegression().fit(X, y)
    double = exact_kl(clf, X, y, n_draws=300, random_state=0)
    single = exact_kl(clf, X, y, n_draws=300, dtype="float32", random_state=0)
    assert single.kl == pytest.approx(double.kl, abs=1e-5) and double.kl > 1e-3
    np.testing.assert_allclose(single.mean, double.mean, atol=1e-4 * np.max(double.sd))
    lazy = pytest.importorskip("dask.array")
    chunked = exact_kl(clf, lazy.from_array(X, chunks=(700, 3)), lazy.from_array(y, chunks=700),
                       n_draws=300, dtype="float32", random_state=0)
    assert chunked.kl == pytest.approx(single.kl, rel=1e-4)
    sparse_rows = exact_kl(clf, sparse.csr_matrix(X), y, n_draws=300, dtype="float32",
                           random_state=0)
    assert sparse_rows.kl == pytest.approx(single.kl, rel=1e-4)
    with pytest.raises(ValueError, match="dtype"):
        exact_kl(clf, X, y, dtype="float16")
    # a model without a difference form (probit) runs in float64 whatever the option
    from skcoreset import BayesianProbitRegression
    probit = BayesianProbitRegression().fit(X, y)
    assert (exact_kl(probit, X, y, n_draws=200, dtype="float32", random_state=0).kl
            == exact_kl(probit, X, y, n_draws=200, random_state=0).kl)


def test_a_corrected_pipeline_is_refused_with_its_own_measures():
    X, y = logistic_data(600, [1.0], -0.5, seed=1)
    pipe = Pipeline([
        ("coreset", UniformCoreset(M=300, random_state=0)),
        ("clf", BayesianLogisticRegression(method="mcmc", n_draws=300, random_state=0)),
    ]).fit(X, y)
    assert pipe.exact_corrected_  # the default corrects a sampled coreset posterior
    with pytest.raises(ValueError, match=r"exact_corrected_=True.*kl_before_ \("):
        exact_kl(pipe, X, y)


@pytest.mark.parametrize("shape", ["light", "heavy", "few"])
def test_pareto_smoothed_weights_are_arviz_psislw_in_the_draws_order(shape):
    # the correction and the exact distances need no optional dependency: the package's
    # PSIS gives ArviZ 0.x's smoothed weights and k-hat (normalised, in the draws' order)
    arviz = pytest.importorskip("arviz")
    if int(arviz.__version__.split(".")[0]) >= 1:
        pytest.skip("ArviZ 1.x smooths the tail its own way (see the loo tests)")
    rng = np.random.default_rng(0)
    log_ratios = {"light": rng.normal(size=1000), "heavy": rng.standard_t(2, size=3000),
                  "few": 3.0 * rng.normal(size=30)}[shape]
    expected, expected_k = arviz.psislw(log_ratios.copy(), reff=0.8)
    log_weights, k = pareto_smoothed(log_ratios, 0.8)
    np.testing.assert_allclose(log_weights, expected - logsumexp(expected), atol=1e-12)
    assert k == pytest.approx(expected_k, rel=1e-12)
    assert pareto_smoothed(np.full(50, 2.0), 1.0)[1] == -np.inf  # q is p: no tail
