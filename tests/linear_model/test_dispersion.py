"""The negative binomial overdispersion estimated from all rows, in memory, in a
``np.memmap`` and on dask arrays: statsmodels' NB2 maximum-likelihood estimate and
standard error under a wide prior, beyond the pilot's 10,000 rows."""

import numpy as np
import pytest

from skcoreset import BayesianNegativeBinomialRegression
from skcoreset._inference.resolve import PILOT_ROWS

sm = pytest.importorskip("statsmodels.api")

_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)


def _counts(n, seed=0, alpha=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    mu = np.exp(X @ [0.5, -0.3, 0.2] + 0.5)
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * mu)).astype(float)


@pytest.fixture(scope="module")
def data():
    X, y = _counts(5 * PILOT_ROWS)
    fit = sm.NegativeBinomial(y, sm.add_constant(X, prepend=False)).fit(
        disp=0, method="newton", maxiter=100)
    return X, y, np.asarray(fit.params), np.asarray(fit.bse)


def test_alpha_from_all_rows_is_statsmodels_mle(data):
    X, y, params, bse = data
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(X, y)
    np.testing.assert_allclose(reg.alpha_, params[-1], rtol=1e-6)
    np.testing.assert_allclose(reg.alpha_std_, bse[-1], rtol=1e-5)
    # the pilot's 10,000 rows alone give an sd about sqrt(5) times wider
    pilot = BayesianNegativeBinomialRegression(**_FLAT).fit(X[::5], y[::5])
    assert pilot.alpha_std_ > 2 * reg.alpha_std_


def test_alpha_from_a_memmap_is_that_in_memory(data, tmp_path):
    X, y, params, bse = data
    path = tmp_path / "X.dat"
    mapped = np.memmap(path, dtype=np.float64, mode="w+", shape=X.shape)
    mapped[:] = X
    mapped.flush()
    mapped = np.memmap(path, dtype=np.float64, mode="r", shape=X.shape)
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(mapped, y)
    np.testing.assert_allclose(reg.alpha_, params[-1], rtol=1e-6)
    np.testing.assert_allclose(reg.alpha_std_, bse[-1], rtol=1e-5)


def test_alpha_from_dask_arrays_is_that_in_memory(data):
    da = pytest.importorskip("dask.array")
    X, y, params, bse = data
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(
        da.from_array(X, chunks=(12_000, 3)), da.from_array(y, chunks=12_000))
    np.testing.assert_allclose(reg.alpha_, params[-1], rtol=1e-6)
    np.testing.assert_allclose(reg.alpha_std_, bse[-1], rtol=1e-5)
    np.testing.assert_allclose(reg.posterior_.mean, params[:-1], atol=1e-3 * bse.max())


def test_alpha_with_weights_counts_rows_as_repeated():
    """Weight 2 is the row twice, beyond the pilot rows too."""
    X, y = _counts(PILOT_ROWS + 3000, seed=1)
    w = np.ones(len(y))
    w[:4000] = 2.0
    reg = BayesianNegativeBinomialRegression(**_FLAT).fit(X, y, sample_weight=w)
    rep = np.r_[np.arange(len(y)), np.arange(4000)]
    fit = sm.NegativeBinomial(y[rep], sm.add_constant(X[rep], prepend=False)).fit(
        disp=0, method="newton", maxiter=100)
    np.testing.assert_allclose(reg.alpha_, fit.params[-1], rtol=1e-6)
    np.testing.assert_allclose(reg.alpha_std_, fit.bse[-1], rtol=1e-5)
