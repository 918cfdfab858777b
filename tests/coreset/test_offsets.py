"""Every coreset constructor builds a negative binomial coreset under the rows' offsets (the
exposure of counts, in each row's linear predictor) and hands them on with its rows: the
pipeline's posterior is the all-rows fit's and statsmodels' GLM with the same offsets, while
the same rows without their offsets, or a coreset built without them, are far off."""

import numpy as np
import pytest
from sklearn.base import clone

import skcoreset.coreset
from skcoreset import BayesianLogisticRegression, BayesianNegativeBinomialRegression
from skcoreset._linalg import gaussian_kl_cholesky
from skcoreset.coreset import (BaseCoreset, GIGACoreset, QuasiNewtonCoreset,
                               SensitivityCoreset, SparseVICoreset, StreamingCoreset,
                               UniformCoreset)
from skcoreset.coreset._base import LikelihoodCoreset
from skcoreset.coreset._sensitivity import (_signed_design, assign_clusters,
                                            sensitivity_upper_bounds)
from skcoreset.families import NegativeBinomialFamily
from skcoreset.pipeline import Pipeline

sm = pytest.importorskip("statsmodels.api")

# the overdispersion, known to every fit: the tests are about the offsets
_ALPHA = 0.5
# a wide prior: the posterior mode is statsmodels' maximum-likelihood estimate
_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)

# every exported constructor (a new one is checked with M=600 unless listed here)
CONSTRUCTORS = sorted(
    name for name in skcoreset.coreset.__all__
    if isinstance(getattr(skcoreset.coreset, name), type)
    and issubclass(getattr(skcoreset.coreset, name), BaseCoreset)
    and getattr(skcoreset.coreset, name) is not BaseCoreset)
# budgets and settings that keep each test to a second or two
_SETTINGS = {
    "QuasiNewtonCoreset": dict(M=600),
    "UniformCoreset": dict(M=1500),  # uniform rows: a large share for a close posterior
    "SparseVICoreset": dict(M=30, n_iter_opt=20, n_draws=40),
    "StreamingCoreset": dict(base_coreset=GIGACoreset(M=400), block_size=1000),
}
# logistic only (the sensitivity bounds are the logistic loss's)
_NOT_NEGATIVE_BINOMIAL = {"SensitivityCoreset": "only the logistic model"}


def _make(name):
    settings = _SETTINGS.get(name, {"M": 600})
    # a clone: set_params of the one base_coreset in _SETTINGS would change every later test's
    return clone(getattr(skcoreset.coreset, name)(**settings, random_state=0))


@pytest.fixture(scope="module")
def counts():
    """Counts over exposures spread across six units of log exposure, NB2 noise of known
    alpha, with statsmodels' GLM fit and the all-rows posterior given the offsets."""
    rng = np.random.default_rng(0)
    n = 2000
    X = np.column_stack([rng.random(n) < 0.3, rng.normal(size=n)])
    offset = rng.uniform(-3.0, 3.0, n)
    mu = np.exp(offset + X @ [0.6, -0.4] + 0.5)
    y = rng.negative_binomial(1 / _ALPHA, 1 / (1 + _ALPHA * mu)).astype(float)
    glm = sm.GLM(y, sm.add_constant(X, prepend=False), offset=offset,
                 family=sm.families.NegativeBinomial(alpha=_ALPHA)).fit()
    full = BayesianNegativeBinomialRegression(alpha=_ALPHA, **_FLAT).fit(X, y, offset=offset)
    return X, y, offset, np.asarray(glm.params), np.asarray(glm.bse), full.posterior_


def _kl(posterior, full):
    return gaussian_kl_cholesky(posterior.mean, posterior.cov_cholesky, full.mean,
                                full.cov_cholesky)


def _estimator():
    return BayesianNegativeBinomialRegression(alpha=_ALPHA, **_FLAT)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_every_constructor_builds_under_the_offsets(name, counts):
    X, y, offset, params, bse, full = counts
    if name in _NOT_NEGATIVE_BINOMIAL:
        with pytest.raises(ValueError, match=_NOT_NEGATIVE_BINOMIAL[name]):
            _make(name).set_params(model="negative_binomial").fit(X, y, offset=offset)
        return
    pipe = Pipeline([("coreset", _make(name)), ("reg", _estimator())]).fit(
        X, y, coreset__offset=offset)
    coreset, posterior = pipe[0], pipe[-1].posterior_
    rows, weights = coreset.sample_indices_, coreset.sample_weight_
    assert coreset.model_ == "negative_binomial" and len(rows) < len(y)
    np.testing.assert_array_equal(coreset.sample_offset_, offset[rows])
    # the coreset's posterior is the all-rows one, and statsmodels' within half an sd
    assert _kl(posterior, full) < 0.1
    assert np.max(np.abs(posterior.mean - params) / bse) < 0.5
    # the same rows without their offsets: tens of standard errors off
    blind = _estimator().fit(X[rows], y[rows], sample_weight=weights).posterior_
    assert np.max(np.abs(blind.mean - params) / bse) > 5
    base = coreset._base() if isinstance(coreset, StreamingCoreset) else coreset
    if isinstance(base, LikelihoodCoreset):
        # its likelihood was read with the offsets: built without them, the rows and
        # weights fit (with their offsets) a posterior nats away
        unaware = clone(base).set_params(model="negative_binomial")
        if base is not coreset:
            unaware = clone(coreset).set_params(base_coreset=unaware)
        unaware.fit(X, y)
        rows, weights = unaware.sample_indices_, unaware.sample_weight_
        misled = _estimator().fit(X[rows], y[rows], sample_weight=weights,
                                  offset=offset[rows]).posterior_
        assert _kl(misled, full) > 5 * max(_kl(posterior, full), 0.05)


# the logistic model's settings where they differ (its sensitivity bounds are loose: many
# draws; SparseVI's greedy steps are noisier there)
_BINARY_SETTINGS = {**_SETTINGS, "SensitivityCoreset": dict(M=20_000),
                    "SparseVICoreset": dict(M=30, n_iter_opt=20, n_draws=40)}


# sensitivity draws beyond the rows, and SparseVI's 30 rows a nat or so away, say so
@pytest.mark.filterwarnings("ignore:.*does not limit the coreset:UserWarning")
@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_every_constructor_builds_under_binary_offsets(name):
    """The logistic model's offsets (any link's known term) reach every constructor too:
    the pipeline's coefficients are statsmodels' Binomial GLM(offset=) within a standard
    error, where the same rows without their offsets are several off."""
    rng = np.random.default_rng(0)
    n = 2000
    X = np.column_stack([rng.random(n) < 0.3, rng.normal(size=n)])
    offset = rng.uniform(-4.0, 4.0, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(offset + X @ [0.6, -0.4] + 0.5)))).astype(int)
    glm = sm.GLM(y, sm.add_constant(X, prepend=False), offset=offset,
                 family=sm.families.Binomial()).fit()
    params, bse = np.asarray(glm.params), np.asarray(glm.bse)
    coreset = getattr(skcoreset.coreset, name)(
        **_BINARY_SETTINGS.get(name, {"M": 600}), random_state=0)
    pipe = Pipeline([("coreset", coreset), ("clf", BayesianLogisticRegression(**_FLAT))])
    pipe.fit(X, y, coreset__offset=offset)
    rows, weights = pipe[0].sample_indices_, pipe[0].sample_weight_
    np.testing.assert_array_equal(pipe[0].sample_offset_, offset[rows])
    assert np.max(np.abs(pipe[-1].posterior_.mean - params) / bse) < 1
    blind = BayesianLogisticRegression(**_FLAT).fit(X[rows], y[rows], sample_weight=weights)
    assert np.max(np.abs(blind.posterior_.mean - params) / bse) > 2.5


def test_exposure_and_offset_add_up_in_every_step(counts):
    """``exposure`` and ``offset`` are one offset, ``offset + log(exposure)``: the same
    coreset as that offset alone, and its rows' offsets as ``sample_offset_``."""
    X, y, offset, *_ = counts
    exposure = np.exp(0.5 * offset)
    for coreset in (GIGACoreset(M=200, random_state=0),
                    SparseVICoreset(M=20, n_iter_opt=10, n_draws=40, random_state=0)):
        coreset.set_params(model="negative_binomial")
        split = clone(coreset).fit(X, y, exposure=exposure, offset=0.5 * offset)
        whole = clone(coreset).fit(X, y, offset=offset)
        np.testing.assert_array_equal(split.sample_indices_, whole.sample_indices_)
        np.testing.assert_allclose(split.sample_weight_, whole.sample_weight_, rtol=1e-6)
        np.testing.assert_allclose(split.sample_offset_, offset[split.sample_indices_],
                                   rtol=1e-12)


def _dask(X, y, offset, chunks=500):
    da = pytest.importorskip("dask.array")
    # y and the offsets chunked unlike X: the constructors must line them up
    return (da.from_array(X, chunks=(chunks, 1)), da.from_array(y, chunks=chunks + 70),
            da.from_array(offset, chunks=chunks - 30))


@pytest.mark.parametrize("name", ["GIGACoreset", "QuasiNewtonCoreset", "SparseVICoreset",
                                  "StreamingCoreset"])
def test_dask_offsets_build_the_in_memory_coreset(name, counts):
    """On dask arrays the offsets travel with the chunks: merge-reduce over the chunks is
    StreamingCoreset over blocks of the same rows in memory, QuasiNewtonCoreset the same
    coreset as in memory."""
    X, y, offset, *_ = counts
    model = NegativeBinomialFamily(alpha=_ALPHA)  # not estimated, from the first chunk
    coreset = _make(name).set_params(**(
        {"base_coreset__model": model} if name == "StreamingCoreset"
        else {"model": model, "M": 100 if name != "SparseVICoreset" else 20}))
    if name in ("QuasiNewtonCoreset", "StreamingCoreset"):
        expected = clone(coreset).fit(X, y, offset=offset)
    else:  # merge-reduce over the chunks (one per 500 rows)
        expected = StreamingCoreset(clone(coreset), block_size=500, random_state=0).fit(
            X, y, offset=offset)
    Xd, yd, offset_d = _dask(X, y, offset)
    lazy = clone(coreset).fit(Xd, yd, offset=offset_d)
    np.testing.assert_array_equal(lazy.sample_indices_, expected.sample_indices_)
    np.testing.assert_allclose(lazy.sample_weight_, expected.sample_weight_, rtol=1e-5)
    np.testing.assert_array_equal(lazy.sample_offset_, offset[lazy.sample_indices_])


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_dask_exposure_and_alpha_estimated_on_the_first_chunk_with_its_offsets(counts):
    """A dask exposure is the offset log(exposure); alpha="auto" is estimated from the first
    chunk with its offsets (without them the offsets' spread reads as overdispersion)."""
    da = pytest.importorskip("dask.array")
    X, y, offset, *_ = counts
    Xd = da.from_array(X, chunks=(1000, 2))
    exposure = da.from_array(np.exp(offset), chunks=1000)
    coreset = UniformCoreset(M=100, model="negative_binomial", random_state=0).fit(
        Xd, da.from_array(y, chunks=1000), exposure=exposure)
    assert 0.35 < coreset.family_.alpha < 0.7
    np.testing.assert_allclose(coreset.sample_offset_, offset[coreset.sample_indices_],
                               rtol=1e-12)
    blind = UniformCoreset(M=100, model="negative_binomial", random_state=0).fit(
        Xd, da.from_array(y, chunks=1000))
    assert blind.family_.alpha > 2


def test_poisson_exposure_on_dask_builds_the_coreset_of_weighted_rates():
    """The Poisson model's exposure on dask arrays: rates y / exposure weighted by it,
    computed on the chunks, the coreset of the same rates in memory (and of counts over
    the exposure passed in memory)."""
    pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    exposure = np.exp(rng.uniform(-2.0, 3.0, 3000))
    y = rng.poisson(exposure * np.exp(0.3 + X @ [0.5, -0.4])).astype(float)
    coreset = QuasiNewtonCoreset(M=200, model="poisson", random_state=0)
    expected = clone(coreset).fit(X, y / exposure, sample_weight=exposure)
    from_counts = clone(coreset).fit(X, y, exposure=exposure)
    np.testing.assert_array_equal(from_counts.sample_indices_, expected.sample_indices_)
    Xd, yd, exposure_d = _dask(X, y, exposure)
    lazy = clone(coreset).fit(Xd, yd, exposure=exposure_d)
    np.testing.assert_array_equal(lazy.sample_indices_, expected.sample_indices_)
    np.testing.assert_allclose(lazy.sample_weight_, expected.sample_weight_, rtol=1e-6)
    _, y_core, w_core = clone(coreset).fit_coreset(Xd, yd, exposure=exposure_d)
    rates = (y / exposure)[lazy.sample_indices_]  # handed on: the rates, not the counts
    np.testing.assert_allclose(y_core, rates, rtol=1e-12)
    with pytest.raises(ValueError, match="exposure"):  # checked in the tasks, as in memory
        clone(coreset).fit(Xd, yd, exposure=-exposure_d)


def test_dask_offsets_that_are_not_numbers_are_refused_by_name():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).normal(size=(300, 2))
    y = np.arange(300) % 5
    with pytest.raises(TypeError, match="offset"):
        UniformCoreset(M=20, model="negative_binomial").fit(
            da.from_array(X, chunks=100), y, offset=np.ones(300, dtype=bool))


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_a_constructor_that_does_not_read_offsets_fails_naming_them(counts):
    """A constructor whose ``_build`` takes no ``offset=`` fails on rows with offsets rather
    than build a coreset that ignores them."""
    X, y, offset, *_ = counts

    class EveryOther(BaseCoreset):
        def _build(self, X, y, sample_weight, family, prior_prec, rng):
            indices = np.arange(0, len(X), 2)[:self.M]
            return indices, 2 * sample_weight[indices]

    every_other = EveryOther(M=1000, model="negative_binomial")
    assert len(every_other.fit(X, y).sample_indices_) == 1000
    with pytest.raises(TypeError, match="offset"):
        every_other.fit(X, y, offset=offset)


def test_a_stream_of_blocks_with_offsets_is_the_fit_of_all_rows(counts):
    """partial_fit takes each block's offsets: the stream of four calls is the coreset of
    fit on all rows (the same tree), its rows' offsets in sample_offset_, and a block
    without offsets cannot join a stream with them (nor the Poisson model's exposure)."""
    X, y, offset, *_ = counts
    stream = StreamingCoreset(QuasiNewtonCoreset(M=200, model=NegativeBinomialFamily(
        alpha=_ALPHA)), block_size=500, random_state=0)
    whole = clone(stream).fit(X, y, offset=offset)
    for start in range(0, len(y), 500):
        rows = slice(start, start + 500)
        stream.partial_fit(X[rows], y[rows], exposure=np.exp(offset[rows]))
    np.testing.assert_array_equal(stream.sample_indices_, whole.sample_indices_)
    np.testing.assert_allclose(stream.sample_weight_, whole.sample_weight_, rtol=1e-8)
    np.testing.assert_allclose(stream.sample_offset_, offset[stream.sample_indices_],
                               rtol=1e-12)
    unaware = clone(stream).fit(X, y)  # the same blocks without their offsets
    assert not np.array_equal(unaware.sample_indices_, whole.sample_indices_)
    with pytest.raises(ValueError, match="in every block or in none"):
        stream.partial_fit(X[:500], y[:500])
    assert stream.n_samples_seen_ == len(y)  # the refused block left the stream as it was
    with pytest.raises(ValueError, match="rates y / exposure"):
        StreamingCoreset(UniformCoreset(M=50, model="poisson")).partial_fit(
            X, y, exposure=np.exp(offset))


def test_sensitivity_bounds_hold_under_offsets():
    """Lemma 3.1 of Huggins, Campbell & Broderick (2016) with every row its own cluster is
    the rigorous bound ``W / (1 + sum_m!=n w_m exp(-R ||Z_m - Z_n||))`` of the sensitivity
    ``W phi(s_n) / sum_m w_m phi(s_m)``, ``phi(s) = log(1 + e^-s)``: with the offsets it
    holds at every coefficient vector of the ball, where bounds that ignore them fail."""
    rng = np.random.default_rng(0)
    n, radius = 60, 1.5
    X, offset = 0.1 * rng.normal(size=(n, 2)), rng.uniform(-4.0, 4.0, n)
    y, w = np.where(rng.random(n) < 0.5, 1.0, -1.0), rng.uniform(0.5, 2.0, n)
    # coefficients (with the intercept) on the ball's surface and inside it
    theta = rng.normal(size=(4000, 3))
    theta *= radius * rng.random((4000, 1)) ** 0.2 / np.linalg.norm(theta, axis=1)[:, None]
    margins = y[:, None] * (X @ theta[:, :2].T + theta[:, 2] + offset[:, None])
    loss = np.logaddexp(0.0, -margins)
    sensitivity = (w.sum() * loss / (w @ loss)).max(axis=1)

    def bounds(with_offset):
        o = offset if with_offset else None
        Z = _signed_design(X, y, slice(None), True, o)
        return sensitivity_upper_bounds(X, y, w, Z, np.arange(n),
                                        np.hypot(radius, 1.0) if with_offset else radius,
                                        True, offset=o)

    assert np.all(sensitivity <= bounds(True))
    assert np.mean(sensitivity > bounds(False)) > 0.2


def test_sensitivity_coreset_reads_offsets():
    """A logistic model's offsets give the bounds of their margins, in memory and on dask
    arrays (the same bounds), and the coreset keeps its rows' offsets."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    X, offset = rng.normal(size=(3000, 2)), rng.uniform(-3.0, 3.0, 3000)
    y = (rng.random(3000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5] + offset)))).astype(int)
    coreset = SensitivityCoreset(M=1000, random_state=0).fit(X, y, offset=offset)
    np.testing.assert_array_equal(coreset.sample_offset_, offset[coreset.sample_indices_])
    assert coreset.cluster_centers_.shape[1] == 4  # y o appended to y [x, 1]
    lazy = SensitivityCoreset(M=1000, random_state=0).fit(
        da.from_array(X, chunks=(700, 2)), da.from_array(y, chunks=700),
        offset=da.from_array(offset, chunks=700))
    np.testing.assert_array_equal(lazy.sample_offset_, offset[lazy.sample_indices_])
    signed = np.where(y > 0, 1.0, -1.0)
    # with the centres found (on a subsample: another one on dask), every bound is that of
    # the margins with their offsets, over all rows
    for fitted, computed in [(coreset, coreset.sensitivities_),
                             (lazy, lazy.sensitivities_.compute())]:
        labels, _ = assign_clusters(X, signed, fitted.cluster_centers_, True, offset)
        expected = sensitivity_upper_bounds(
            X, signed, np.ones(3000), fitted.cluster_centers_, labels,
            np.hypot(fitted.radius_, 1.0), True, offset=offset)
        np.testing.assert_allclose(computed, expected, rtol=1e-10)


def test_poisson_exposure_on_dask_merge_reduce_is_the_stream_of_the_same_blocks():
    """GIGA over dask chunks of counts over an exposure: the merge-reduce tree of
    StreamingCoreset over the same blocks in memory, with the weighting distribution's
    unit of weight that of the user's weights (not of their products with the exposure)."""
    pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 2))
    exposure = np.exp(rng.uniform(np.log(1e2), np.log(1e5), 2000))
    y = rng.poisson(exposure * np.exp(-8.0 + X @ [0.5, -0.4])).astype(float)
    base = GIGACoreset(M=60, model="poisson", random_state=0)
    expected = StreamingCoreset(clone(base), block_size=500, random_state=0).fit(
        X, y, exposure=exposure)
    lazy = clone(base).fit(*_dask(X, y, exposure)[:2], exposure=_dask(X, y, exposure)[2])
    np.testing.assert_array_equal(lazy.sample_indices_, expected.sample_indices_)
    np.testing.assert_allclose(lazy.sample_weight_, expected.sample_weight_, rtol=1e-6)
