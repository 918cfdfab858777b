"""Every coreset constructor under the negative binomial model with ``alpha="auto"``
estimates the overdispersion on all its training rows (in memory, a memmap or dask arrays,
with offsets) and the pipeline's final estimator takes it: its ``alpha_`` and coefficients
are statsmodels' maximum-likelihood ``NegativeBinomial`` fit's, while the estimator fitted
on the coreset's few weighted rows alone misses the overdispersion by dozens of standard
errors."""

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import BayesianNegativeBinomialRegression
from skcoreset.coreset import GIGACoreset, StreamingCoreset, UniformCoreset
from skcoreset.coreset._base import estimated_dispersion
from skcoreset.pipeline import Pipeline

from .test_offsets import _NOT_NEGATIVE_BINOMIAL, CONSTRUCTORS, _make

sm = pytest.importorskip("statsmodels.api")
# small coresets on purpose: their accuracy is not what is tested
pytestmark = pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")

# a wide prior: the posterior mode is statsmodels' maximum-likelihood estimate
_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)
_NEGATIVE_BINOMIAL = [name for name in CONSTRUCTORS if name not in _NOT_NEGATIVE_BINOMIAL]


def _statsmodels(X, y, offset=None):
    """``(alpha, its se, coefficients then intercept, their se)`` of the MLE."""
    fit = sm.NegativeBinomial(y, sm.add_constant(X, prepend=False), offset=offset).fit(
        disp=0, maxiter=200)
    return fit.params[-1], fit.bse[-1], fit.params[:-1], fit.bse[:-1]


@pytest.fixture(scope="module")
def counts():
    """2,000 NB2 counts of overdispersion 0.5 over log exposures uniform on (-3, 3)."""
    rng = np.random.default_rng(0)
    n = 2000
    X = np.column_stack([rng.random(n) < 0.3, rng.normal(size=n)])
    offset = rng.uniform(-3.0, 3.0, n)
    mu = np.exp(offset + X @ [0.6, -0.4] + 0.5)
    y = rng.negative_binomial(2.0, 1 / (1 + 0.5 * mu)).astype(float)
    return X, y, offset


@pytest.mark.parametrize("with_offset", [True, False], ids=["offset", "no-offset"])
@pytest.mark.parametrize("name", _NEGATIVE_BINOMIAL)
def test_pipeline_takes_the_overdispersion_of_all_rows(name, with_offset, counts):
    X, y, offset = counts
    offset = offset if with_offset else None
    alpha, alpha_se, coef, coef_se = _statsmodels(X, y, offset)
    pipe = Pipeline([("coreset", _make(name)),
                     ("clf", BayesianNegativeBinomialRegression(**_FLAT))])
    pipe.fit(X, y, **({} if offset is None else {"coreset__offset": offset}))
    final = pipe[-1]
    assert abs(final.alpha_ - alpha) < 0.05 * alpha_se  # all rows' estimate, not the coreset's
    assert final.alpha_std_ == pytest.approx(alpha_se, rel=0.05)
    assert np.all(np.abs(np.r_[final.coef_, final.intercept_] - coef) < 4 * coef_se)
    assert final.alpha_interval()[0] < alpha < final.alpha_interval()[1]


@pytest.mark.parametrize("make", [lambda: GIGACoreset(M=600, random_state=0),
                                  lambda: _make("SparseVICoreset")],
                         ids=["GIGACoreset", "SparseVICoreset"])
def test_coreset_rows_alone_miss_the_overdispersion(make, counts):
    """The failing control: the estimator fitted on the coreset's weighted rows (the old
    route) takes them for Poisson-like counts."""
    X, y, offset = counts
    alpha, alpha_se, _, _ = _statsmodels(X, y, offset)
    final = BayesianNegativeBinomialRegression(**_FLAT)
    coreset = make()
    X_core, y_core, w_core = coreset.fit_coreset(X, y, offset=offset, estimator=final)
    alone = clone(final).fit(X_core, y_core, sample_weight=w_core, offset=coreset.sample_offset_)
    assert abs(alone.alpha_ - alpha) > 5 * alpha_se
    assert estimated_dispersion(coreset).alpha == pytest.approx(alpha, abs=0.05 * alpha_se)


def test_memmap_and_dask_rows_estimate_it_on_all_rows(counts, tmp_path):
    """The first chunk of dask arrays is only the pilot: the estimate is all rows', as of
    rows in memory and a memmap."""
    da = pytest.importorskip("dask.array")
    X, y, offset = counts
    alpha, alpha_se, _, _ = _statsmodels(X, y, offset)
    memmap = np.lib.format.open_memmap(tmp_path / "X.npy", mode="w+", dtype=float,
                                       shape=X.shape)
    memmap[:] = X
    estimates = []
    for rows in (X, memmap, da.from_array(X, chunks=(300, 2))):
        off = offset if not hasattr(rows, "dask") else da.from_array(offset, chunks=300)
        target = y if not hasattr(rows, "dask") else da.from_array(y, chunks=300)
        coreset = UniformCoreset(M=200, model="negative_binomial", prior_scale=1e3,
                                 intercept_prior_scale=1e3, random_state=0)
        coreset.fit(rows, target, offset=off)
        estimates.append(estimated_dispersion(coreset))
    for dispersion in estimates:
        assert dispersion.alpha == pytest.approx(alpha, abs=0.05 * alpha_se)
        assert dispersion.alpha == pytest.approx(estimates[0].alpha, rel=1e-6)
        assert dispersion.alpha * dispersion.log_alpha_sd == pytest.approx(alpha_se, rel=0.05)


@pytest.mark.parametrize("make", [lambda: GIGACoreset(M=300, random_state=0),
                                  lambda: UniformCoreset(M=500, random_state=0)],
                         ids=["GIGACoreset", "UniformCoreset"])
def test_doctor_visits(make):
    """The RAND Health Insurance Experiment's doctor visits (5,000 of its 20,190 people,
    evenly spaced): overdispersion 1.3; the coreset's rows alone give a fraction of it."""
    data = sm.datasets.randhie.load_pandas()
    y = data.endog.to_numpy(float)[::4]
    X = data.exog.to_numpy(float)[::4]
    alpha, alpha_se, _, _ = _statsmodels(X, y)
    pipe = Pipeline([("coreset", make()),
                     ("clf", BayesianNegativeBinomialRegression(**_FLAT))]).fit(X, y)
    assert abs(pipe[-1].alpha_ - alpha) < 0.05 * alpha_se
    X_core, y_core, w_core = pipe[0].fit_coreset(X, y, estimator=pipe[-1])
    alone = clone(pipe[-1]).fit(X_core, y_core, sample_weight=w_core)
    assert abs(alone.alpha_ - alpha) > 3 * alpha_se


@pytest.mark.parametrize("with_offset", [True, False], ids=["offset", "no-offset"])
def test_a_stream_pools_the_overdispersion_of_its_calls(with_offset):
    """partial_fit estimates alpha on each call's rows and pools them: after a first call of
    200 rows (alone 2-5 standard errors off here) the stream's alpha is statsmodels' on all
    the rows seen, with its standard error, and the pipeline's estimator takes it."""
    rng = np.random.default_rng(1)
    n = 20_000
    X = np.column_stack([rng.random(n) < 0.3, rng.normal(size=n)])
    offset = rng.uniform(-2.0, 2.0, n) if with_offset else np.zeros(n)
    y = rng.negative_binomial(2.0, 1 / (1 + 0.5 * np.exp(offset + X @ [0.6, -0.4])))
    alpha, alpha_se, _, _ = _statsmodels(X, y.astype(float), offset)
    stream = StreamingCoreset(UniformCoreset(M=100, model="negative_binomial", **_FLAT),
                              block_size=5000, random_state=0)
    calls = [0, 200, 5000, 10_000, 15_000, n]
    for start, stop in zip(calls[:-1], calls[1:]):
        rows = slice(start, stop)
        stream.partial_fit(X[rows], y[rows], offset=offset[rows] if with_offset else None)
    assert abs(stream.family_.alpha - alpha) < 0.5 * alpha_se
    dispersion = estimated_dispersion(stream)
    assert dispersion.alpha == stream.family_.alpha
    assert dispersion.alpha * dispersion.log_alpha_sd == pytest.approx(alpha_se, rel=0.1)
    # the blocks after the first call are built under the pooled estimate
    assert stream._stream.context.family.alpha == stream.family_.alpha
    # a stream started by fit pools its rows' estimate with those of the calls after it
    started = clone(stream).fit(X[:10_000], y[:10_000],
                                offset=offset[:10_000] if with_offset else None)
    started.partial_fit(X[10_000:], y[10_000:],
                        offset=offset[10_000:] if with_offset else None)
    assert abs(started.family_.alpha - alpha) < 0.5 * alpha_se


def test_a_failed_call_leaves_the_stream_under_its_pooled_overdispersion(
        counts, monkeypatch):
    """A partial_fit that fails after pooling its alpha leaves the stream as it was: the
    blocks of the next call are built under the alpha of the calls that completed."""
    X, y, _ = counts
    stream = StreamingCoreset(UniformCoreset(M=100, model="negative_binomial", **_FLAT),
                              block_size=500, random_state=0)
    stream.partial_fit(X[:1000], y[:1000])
    alpha = stream.family_.alpha

    def interrupted(self, stream):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(StreamingCoreset, "_finish_stream", interrupted)
        with pytest.raises(KeyboardInterrupt):
            stream.partial_fit(X[1000:], y[1000:])
    assert stream.family_.alpha == alpha
    assert stream._stream.context.family.alpha == alpha
