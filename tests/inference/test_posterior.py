"""GaussianPosterior against scipy.stats and the closed-form Gaussian KL."""

import numpy as np
import pytest
from scipy import stats

from skcoreset import GaussianPosterior
from skcoreset._linalg import gaussian_kl_cholesky


def _random_spd(rng, p):
    a = rng.normal(size=(p, p))
    return a @ a.T + p * np.eye(p)


def test_cov_and_precision_views_agree():
    rng = np.random.default_rng(0)
    cov = _random_spd(rng, 4)
    mean = rng.normal(size=4)
    from_cov = GaussianPosterior(mean, cov)
    from_prec = GaussianPosterior(mean, precision=np.linalg.inv(cov))
    np.testing.assert_allclose(from_prec.cov, cov, rtol=1e-10)
    np.testing.assert_allclose(from_cov.precision @ cov, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(from_cov.cov_cholesky @ from_cov.cov_cholesky.T, cov)
    np.testing.assert_allclose(from_cov.std, np.sqrt(np.diag(cov)))
    with pytest.raises(ValueError, match="exactly one"):
        GaussianPosterior(mean)


def test_logpdf_matches_scipy():
    rng = np.random.default_rng(1)
    cov = _random_spd(rng, 3)
    mean = rng.normal(size=3)
    post = GaussianPosterior(mean, cov)
    theta = rng.normal(size=(5, 3))
    np.testing.assert_allclose(post.logpdf(theta),
                               stats.multivariate_normal(mean, cov).logpdf(theta))
    assert np.isscalar(post.logpdf(theta[0])) or np.ndim(post.logpdf(theta[0])) == 0


def test_sample_moments_and_reproducibility():
    rng = np.random.default_rng(2)
    cov = _random_spd(rng, 3)
    post = GaussianPosterior(np.array([1.0, -2.0, 0.5]), cov)
    draws = post.sample(200_000, random_state=0)
    assert draws.shape == (200_000, 3)
    np.testing.assert_allclose(draws.mean(axis=0), post.mean, atol=0.03)
    np.testing.assert_allclose(np.cov(draws.T), cov, rtol=0.03, atol=0.03)
    np.testing.assert_array_equal(post.sample(5, random_state=3), post.sample(5, random_state=3))


def test_kl_matches_closed_form_and_monte_carlo():
    rng = np.random.default_rng(3)
    a = GaussianPosterior(rng.normal(size=3), _random_spd(rng, 3))
    b = GaussianPosterior(rng.normal(size=3), _random_spd(rng, 3))
    inv_b = np.linalg.inv(b.cov)
    diff = b.mean - a.mean
    expected = 0.5 * (np.trace(inv_b @ a.cov) + diff @ inv_b @ diff - 3
                      + np.log(np.linalg.det(b.cov) / np.linalg.det(a.cov)))
    np.testing.assert_allclose(a.kl(b), expected)
    draws = a.sample(400_000, random_state=1)
    np.testing.assert_allclose(np.mean(a.logpdf(draws) - b.logpdf(draws)), expected, rtol=0.02)
    assert abs(a.kl(a)) < 1e-10
    np.testing.assert_allclose(
        gaussian_kl_cholesky(a.mean, a.cov_cholesky, b.mean, b.cov_cholesky), a.kl(b))


def test_nearly_singular_covariance_still_factors():
    v = np.array([1.0, 1.0]) / np.sqrt(2)
    cov = np.outer(v, v) + 1e-17 * np.eye(2)  # singular to rounding
    post = GaussianPosterior(np.zeros(2), cov)
    assert np.all(np.isfinite(post.cov_cholesky))
    assert np.all(np.isfinite(post.sample(3, random_state=0)))


def test_posterior_from_the_precision_factor_keeps_one_matrix_and_the_same_results():
    """From the precision's Cholesky factor (overwritten): the covariance's factor of the
    posterior given the precision itself, bit for bit (so the same draws, densities and
    divergences), in that factor's memory; std, cov and precision formed from it agree to
    rounding, std without forming cov."""
    from scipy import linalg

    rng = np.random.default_rng(0)
    a = rng.normal(size=(400, 200))
    precision = a.T @ a + np.diag(rng.uniform(0.5, 2.0, 200))
    mean = rng.normal(size=200)
    want = GaussianPosterior(mean, precision=precision)
    factor = np.asfortranarray(linalg.cholesky(precision, lower=True))
    got = GaussianPosterior.from_precision_cholesky(mean, factor)
    assert np.shares_memory(got.cov_cholesky, factor)
    np.testing.assert_array_equal(got.cov_cholesky, want.cov_cholesky)
    np.testing.assert_array_equal(got.sample(5, random_state=1), want.sample(5, random_state=1))
    np.testing.assert_allclose(got.std, want.std, rtol=1e-14)
    assert got._cov is None  # std formed no covariance
    scale = np.abs(want.cov).max()
    np.testing.assert_allclose(got.cov, want.cov, rtol=0, atol=1e-14 * scale)
    np.testing.assert_allclose(got.precision, precision, rtol=0,
                               atol=1e-10 * np.abs(precision).max())
