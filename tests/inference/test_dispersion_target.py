"""The joint target of NUTS for the negative binomial model, ``[theta..., log alpha]``:
its value against scipy's negative binomial pmf and its gradient against finite
differences, with the ``alpha``-dependent Gamma terms summed over the distinct targets."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from skcoreset._inference.dispersion import LOG_ALPHA_PRIOR_SD, DispersionLogPosterior
from skcoreset.families import NegativeBinomialFamily


def _data(n=300, seed=0, rates=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    mu = np.exp(0.4 + X @ [0.5, -0.3])
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    if rates:  # non-integer targets (counts over an exposure), every one distinct
        y = y / rng.uniform(0.5, 2.0, n)
    return X, y, rng.uniform(0.2, 3.0, n)


def _reference(X, y, w, prior, phi, offset):
    theta, alpha = phi[:-1], np.exp(phi[-1])
    r = 1.0 / alpha
    mu = np.exp(X @ theta[:-1] + theta[-1] + offset)
    loglik = stats.nbinom.logpmf(y, r, r / (r + mu))
    return (w @ loglik - 0.5 * prior @ theta**2
            - 0.5 * (phi[-1] / LOG_ALPHA_PRIOR_SD) ** 2)


@pytest.mark.parametrize("log_alpha", [-3.0, np.log(0.5), 2.0])
def test_value_is_scipys_negative_binomial_and_grad_its_derivative(log_alpha):
    X, y, w = _data()
    prior = np.array([1.0, 0.5, 0.01])
    offset = np.linspace(-0.2, 0.3, len(y))
    target = DispersionLogPosterior(X, y, NegativeBinomialFamily(alpha=1.0), w, prior, True,
                                    offset)
    phi = np.array([0.45, -0.25, 0.35, log_alpha])
    value, eta, grad = target.value_and_grad(phi)
    assert value == pytest.approx(_reference(X, y, w, prior, phi, offset), rel=1e-12)
    step = 1e-6
    numeric = [(_reference(X, y, w, prior, phi + step * e, offset)
                - _reference(X, y, w, prior, phi - step * e, offset)) / (2 * step)
               for e in np.eye(len(phi))]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)


def test_rates_every_target_distinct():
    """Non-integer targets: the quasi-likelihood of the family (``log Gamma`` of real y),
    the grouping over distinct values degenerating to one group per row."""
    X, y, w = _data(rates=True)
    family = NegativeBinomialFamily(alpha=0.5)
    target = DispersionLogPosterior(X, y, family, w, np.ones(3), True)
    phi = np.array([0.4, -0.3, 0.3, np.log(0.5)])
    value, eta, grad = target.value_and_grad(phi)
    expected = (w @ family.loglik(y, eta) - 0.5 * np.sum(phi[:-1] ** 2)
                - 0.5 * (phi[-1] / LOG_ALPHA_PRIOR_SD) ** 2)
    assert value == pytest.approx(expected, rel=1e-12)
    d_rho = family.log_alpha_derivatives(y, eta, second=False)[0]
    assert grad[-1] == pytest.approx(w @ d_rho - phi[-1] / LOG_ALPHA_PRIOR_SD**2, rel=1e-10)


@pytest.mark.parametrize("eta", [-800.0, -40.0, 0.0, 40.0, 700.0])
def test_likelihood_terms_in_the_tails(eta):
    """The one-exponential sigmoids keep the terms exact where the linear predictor is far
    from the data (a NUTS trajectory's far end), against scipy's pmf and expit."""
    family = NegativeBinomialFamily(alpha=0.7)
    y = np.array([0.0, 3.0, 50.0])
    eta = np.full(3, eta)
    r = 1 / 0.7
    kernel, d1, d2 = family.loglik_and_derivatives(y, eta, second=True)
    with np.errstate(over="ignore"):
        expected = stats.nbinom.logpmf(y, r, 1.0 / (1.0 + np.exp(eta) / r))
    finite = np.isfinite(expected)
    # (scipy rounds r / (r + mu) to 1 below eta = -37, where log p(0) = -mu: hence atol)
    np.testing.assert_allclose((kernel + family.loglik_constant(y))[finite], expected[finite],
                               rtol=1e-12, atol=1e-15)
    u = eta - np.log(r)
    np.testing.assert_allclose(d1, y * expit(-u) - r * expit(u), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(d2, -(y + r) * expit(u) * expit(-u), rtol=1e-12, atol=1e-300)


def test_mixed_precision_products_match_the_float64_pass(monkeypatch):
    """Single-precision products about a reference point: the same value and gradient to
    float32's rounding of the differences from it (any reference is exact in arithmetic;
    here one far from the point, a step of 1 in every coefficient)."""
    from skcoreset._inference._common import LogPosterior
    from skcoreset.families import LogisticFamily

    from skcoreset._inference import _common

    monkeypatch.setattr(_common, "_MIN_MIXED_BYTES", 0)  # 3000 rows: below it
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 6))
    y = np.where(rng.random(3000) < expit(X @ np.linspace(-1, 1, 6)), 1.0, -1.0)
    prior = np.ones(7)
    exact = LogPosterior(X, y, LogisticFamily(), np.ones(3000), prior, True,
                         offset=np.full(3000, 0.1))
    reference = np.zeros(7)
    mixed = exact.mixed_precision(reference)
    assert mixed is not exact and exact._mixed is None
    for theta in (reference, reference + 1.0, rng.normal(size=7)):
        (value, eta, grad), (value32, eta32, grad32) = (
            lp.value_and_grad(theta, rows_per_block=700) for lp in (exact, mixed))
        assert value32 == pytest.approx(value, rel=1e-6)
        np.testing.assert_allclose(eta32, eta, atol=1e-5)
        np.testing.assert_allclose(grad32, grad, rtol=1e-5, atol=1e-3)
    # the Hessian's pass stays in float64
    np.testing.assert_array_equal(mixed.value_and_grad(reference, neg_hessian=np.float64)[3],
                                  exact.value_and_grad(reference, neg_hessian=np.float64)[3])
    # no copy for rows that are not a dense float64 array in memory
    from scipy import sparse
    sparse_lp = LogPosterior(sparse.csr_matrix(X), y, LogisticFamily(), np.ones(3000), prior,
                             True)
    assert sparse_lp.mixed_precision(reference) is sparse_lp


def test_mixed_precision_joint_target_of_the_negative_binomial(monkeypatch):
    from skcoreset._inference import _common

    monkeypatch.setattr(_common, "_MIN_MIXED_BYTES", 0)
    X, y, w = _data()
    target = DispersionLogPosterior(X, y, NegativeBinomialFamily(alpha=1.0), w, np.ones(3),
                                    True)
    phi = np.array([0.45, -0.25, 0.35, np.log(0.5)])
    mixed = target.mixed_precision(phi)
    assert mixed is not target
    for point in (phi, phi + 0.3):
        (value, _, grad), (value32, _, grad32) = (t.value_and_grad(point)
                                                  for t in (target, mixed))
        assert value32 == pytest.approx(value, rel=1e-7)
        np.testing.assert_allclose(grad32, grad, rtol=1e-5, atol=1e-4)
