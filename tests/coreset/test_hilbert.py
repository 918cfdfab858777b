"""Hilbert coreset constructors (GIGACoreset, FrankWolfeCoreset): projection size, memory,
weight scale (with exposures) and degenerate budgets (issues 10.4, 11.4, 11.5)."""

import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from sklearn.base import clone

from skcoreset import (BayesianPoissonRegression, FrankWolfeCoreset, GIGACoreset,
                       StreamingCoreset, _progress)
from skcoreset.exceptions import CoresetAccuracyWarning
from skcoreset.families import LogisticFamily
from skcoreset.coreset._projection import project_loglik, relative_weights
from skcoreset.metrics import posterior_kl
from skcoreset.pipeline import Pipeline
from skcoreset.solvers import giga

from ..conftest import logistic_data

HILBERT = [GIGACoreset, FrankWolfeCoreset]


def _logistic_data(n=2000, d=3, seed=0):
    return logistic_data(n, np.linspace(1.5, -1.0, d), 0.2, seed=seed)

# --- projection_dim ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", HILBERT)
def test_auto_projection_follows_m(cls):
    X, y = _logistic_data(n=800)
    assert cls().projection_dim == "auto"
    assert cls(M=20, weighting="prior").fit(X, y).projection_dim_ == 500
    assert cls(M=600, weighting="prior", random_state=0)._resolve_projection_dim(800) == 600
    # never more draws than M asks for, never fewer than the papers' 500
    assert cls(M=10**10)._resolve_projection_dim(800) == 800
    assert cls(M=10**10)._resolve_projection_dim() == 10**10  # streaming: blocks bound it


@pytest.mark.parametrize("cls", HILBERT)
def test_auto_projection_drops_extra_draws_at_large_n(cls):
    # beyond max(M, 100) draws, "auto" keeps the N x J float32 matrix within 0.5 GiB
    assert cls(M=100)._resolve_projection_dim(10**5) == 500  # 0.19 GiB: the papers' J
    assert cls(M=100)._resolve_projection_dim(10**6) == 2**29 // (4 * 10**6) == 134
    assert cls(M=10)._resolve_projection_dim(10**6) == 134
    assert cls(M=100, max_memory=None)._resolve_projection_dim(10**6) == 134
    # never fewer draws than the coreset may need (M) or than 100
    assert cls(M=300)._resolve_projection_dim(10**6) == 300
    assert cls(M=1000)._resolve_projection_dim(10**6) == 1000
    assert cls(M=10)._resolve_projection_dim(10**7) == 100
    # explicit J and merge-reduce blocks are left alone
    assert cls(M=100, projection_dim=500)._resolve_projection_dim(10**6) == 500
    assert cls(M=100)._resolve_projection_dim() == 500
    # beyond max_memory it stays loud: 3e7 rows x 100 draws x 4 bytes = 11 GiB
    coreset = cls(M=100)
    with pytest.raises(MemoryError, match="StreamingCoreset"):
        coreset._check_memory(3 * 10**7, coreset._resolve_projection_dim(3 * 10**7))


@pytest.mark.parametrize("cls", HILBERT)
def test_small_projection_warning_names_max_memory_when_auto_was_limited(cls):
    # "auto" below M only because of max_memory: the fix is max_memory, not projection_dim
    coreset = cls(M=1000, max_memory=0.001)
    coreset.projection_dim_, coreset.error_ = 500, 1e-9
    coreset.stop_reason_ = "numerical precision"
    with pytest.warns(UserWarning, match="limited to 500 draws by max_memory=0.001"):
        coreset._warn_if_small(400, 10**4)
    coreset.projection_dim = 500
    with pytest.warns(UserWarning, match="Raise projection_dim"):
        coreset._warn_if_small(400, 10**4)


@pytest.mark.parametrize("cls", HILBERT)
def test_small_projection_warns_and_names_the_fix(cls):
    # 5 draws: the 4-dimensional centred vectors are matched exactly by a few rows, so the
    # solver stops far below M; the user is told to raise projection_dim
    X, y = _logistic_data(n=1000)
    with pytest.warns(UserWarning, match="Raise projection_dim"):
        coreset = cls(M=200, projection_dim=5, weighting="prior", random_state=0).fit(X, y)
    # at least J - 1 = 4 points (the span of the centred projection), far below M / 2
    assert 4 <= len(coreset.sample_indices_) < 100


@pytest.mark.parametrize("cls", HILBERT)
def test_no_warning_when_the_projection_is_not_the_limit(cls):
    X, y = _logistic_data(n=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        # 20 rows are far from the posterior (kl_estimate_): not the projection's warning
        warnings.simplefilter("ignore", CoresetAccuracyWarning)
        cls(M=20, projection_dim=100, weighting="prior", random_state=0).fit(X, y)


@pytest.mark.parametrize("cls", HILBERT)
def test_projection_dim_one_is_rejected(cls):
    X, y = _logistic_data(n=100)
    with pytest.raises(ValueError, match="projection_dim"):
        cls(M=10, projection_dim=1).fit(X, y)
    with pytest.raises(ValueError, match="projection_dim"):
        cls(M=10, projection_dim="large").fit(X, y)
    # the smallest accepted projection gives a non-empty coreset
    coreset = cls(M=10, projection_dim=2, random_state=0).fit(X, y)
    assert len(coreset.sample_indices_) >= 1


@pytest.mark.parametrize("cls", HILBERT)
def test_huge_budget_allocates_min_m_n_and_stops(cls):
    # M = 10**10 used to allocate 74 GiB; now every buffer is min(M, N) long and the solver
    # stops when nothing improves
    X, y = _logistic_data(n=200, d=2)
    coreset = cls(M=10**10, projection_dim=20, weighting="prior", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        coreset.fit(X, y)
    assert 0 < len(coreset.sample_indices_) <= 200
    assert len(coreset.history_) <= 10 * 200  # iterations capped at 10 N


@pytest.mark.parametrize("cls", HILBERT)
def test_coreset_is_never_empty(cls):
    # constant-zero features and no intercept: every log-likelihood is flat in theta, the
    # projected target is zero and the solver selects nothing
    X = np.zeros((50, 2))
    y = np.array([0, 1] * 25)
    with pytest.warns(UserWarning, match="uniform coreset"):
        coreset = cls(M=10, projection_dim=20, fit_intercept=False, random_state=0).fit(X, y)
    assert len(coreset.sample_indices_) == 10
    np.testing.assert_allclose(coreset.sample_weight_.sum(), 50)


# --- memory --------------------------------------------------------------------------------

def test_projected_vectors_are_float32_and_accurate():
    # float32 storage: the weights GIGA finds are as good, measured on the float64 vectors
    X, y = _logistic_data(n=5000, d=5)
    y_enc = np.where(y == 1, 1.0, -1.0)
    thetas = np.random.default_rng(1).normal(scale=0.3, size=(200, 6))
    v64, total = project_loglik(X, y_enc, np.ones(len(y)), LogisticFamily(), thetas, True,
                                return_sum=True)
    v32 = project_loglik(X, y_enc, np.ones(len(y)), LogisticFamily(), thetas, True,
                         dtype=np.float32)
    assert v32.dtype == np.float32
    np.testing.assert_allclose(total, v64.sum(axis=0), rtol=1e-10)
    # evaluated in float32 (the logistic family allows it): the Monte Carlo vectors carry
    # float32 rounding of their size, nothing more
    scale = np.abs(v64).max(axis=1, keepdims=True)
    assert np.max(np.abs(v32 - v64) / scale) < 3e-6
    for n_iter in (20, 100):
        exact = giga(v64, target=total, n_iter=n_iter)
        rounded = giga(v32, target=total, n_iter=n_iter)
        error = np.linalg.norm(total - rounded.weights @ v64) / np.linalg.norm(total)
        assert error <= 1.05 * exact.error + 1e-6
        assert rounded.size <= n_iter


@pytest.mark.parametrize("cls", HILBERT)
def test_memory_budget_refuses_before_allocating(cls, monkeypatch):
    X, y = _logistic_data(n=1000)
    # 1000 rows x 500 draws x 4 bytes = 1.9 MiB > 1 MiB
    with pytest.raises(MemoryError, match="StreamingCoreset"):
        cls(M=10, projection_dim=500, max_memory=2.0**-10).fit(X, y)
    # "auto" shrinks the projection towards 500 to fit, and refuses below that
    fitted = cls(M=900, max_memory=1000 * 600 * 4 / 2**30, weighting="prior",
                 random_state=0)
    assert fitted._resolve_projection_dim(1000) == 600
    with pytest.raises(MemoryError, match="max_memory"):
        cls(M=900, max_memory=2.0**-12).fit(X, y)
    # no limit
    assert cls(M=10**6, max_memory=None)._resolve_projection_dim(10**7) == 10**6
    # zero-weight rows are not projected, so they do not count
    w = np.zeros(len(y))
    w[:100] = 1.0
    budget = 100 * 500 * 4 / 2**30
    coreset = cls(M=10, projection_dim=500, max_memory=budget, random_state=0)
    coreset.fit(X, y, sample_weight=w)
    assert np.all(coreset.sample_indices_ < 100)


def test_invalid_max_memory_is_rejected():
    X, y = _logistic_data(n=100)
    with pytest.raises(ValueError, match="max_memory"):
        GIGACoreset(M=10, max_memory=0).fit(X, y)


# --- weight scale --------------------------------------------------------------------------

@pytest.mark.parametrize("cls", HILBERT)
@pytest.mark.parametrize("weighting", ["laplace", "laplace-subsample", "prior"])
def test_scaling_all_weights_scales_the_coreset_weights(cls, weighting):
    # multiplying every sample weight by c multiplies the coreset weights by c, same rows
    # (the binary models: weights that say how many rows a row stands for)
    X, y = _logistic_data(n=1000)
    base = np.random.default_rng(3).uniform(0.5, 2.0, size=len(y))
    coreset = cls(M=30, projection_dim=100, weighting=weighting, random_state=0)
    reference = clone(coreset).fit(X, y, sample_weight=base)
    assert reference.sample_weight_.sum() > 0.3 * base.sum()
    for c in (1e-300, 1e-8, 1.0, 1e8):
        scaled = clone(coreset).fit(X, y, sample_weight=c * base)
        np.testing.assert_array_equal(scaled.sample_indices_, reference.sample_indices_)
        np.testing.assert_allclose(scaled.sample_weight_, c * reference.sample_weight_,
                                   rtol=1e-6)
        np.testing.assert_allclose(scaled.error_, reference.error_, rtol=1e-6)


def _poisson_counts(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, rng.poisson(np.exp(0.5 + X @ np.array([0.3, -0.2, 0.1]))).astype(float)


@pytest.mark.parametrize("scale", [1e-2, 1.0, 1e3])
def test_poisson_weighting_distribution_is_the_posterior_of_the_weighted_rows(scale):
    # under the Poisson model a weight may be an exposure: pi-hat is the Laplace posterior
    # of the weighted log-likelihood, as statsmodels' GLM with frequency weights (wide
    # prior: its MLE and covariance), not that of the weights over their mean
    X, y = _poisson_counts()
    w = scale * np.random.default_rng(3).uniform(0.5, 2.0, size=len(y))
    coreset = GIGACoreset(M=30, projection_dim=100, prior_scale=1e3,
                          intercept_prior_scale=1e3, random_state=0).fit(X, y, sample_weight=w)
    reference = sm.GLM(y, sm.add_constant(X, prepend=False), family=sm.families.Poisson(),
                       freq_weights=w).fit()
    posterior = coreset.weighting_posterior_
    np.testing.assert_allclose(posterior.mean, reference.params,
                               atol=1e-3 * np.min(reference.bse))
    np.testing.assert_allclose(np.sqrt(np.diag(posterior.cov)), reference.bse, rtol=1e-3)


def test_weighting_distribution_of_a_huge_total_weight_is_widened_exactly():
    # past a total weight of 2^32 the draws would differ by less than the float32 rounding
    # of the projected log-likelihoods: the weights are scaled down to that total by a power
    # of two, a wider distribution than statsmodels' by exactly its square root
    X, y = _poisson_counts()
    w = np.full(len(y), 1e12)
    coreset = GIGACoreset(M=30, projection_dim=100, prior_scale=1e3,
                          intercept_prior_scale=1e3, random_state=0).fit(X, y, sample_weight=w)
    reference = sm.GLM(y, sm.add_constant(X, prepend=False), family=sm.families.Poisson(),
                       freq_weights=w).fit()
    shrink = 2.0 ** -np.frexp(w.sum() / 2.0**32)[1]
    assert w.sum() * shrink <= 2.0**32 < 2 * w.sum() * shrink
    sd = np.sqrt(np.diag(coreset.weighting_posterior_.cov))
    np.testing.assert_allclose(sd, reference.bse / np.sqrt(shrink), rtol=1e-3)
    np.testing.assert_allclose(coreset.weighting_posterior_.mean, reference.params,
                               atol=1e-3 * np.min(sd))


def test_weights_of_one_are_unchanged_by_the_normalisation():
    w = np.array([0.0, 3.0, 1.0, 2.0])
    np.testing.assert_allclose(relative_weights(w), [0.0, 1.5, 0.5, 1.0])
    np.testing.assert_array_equal(relative_weights(np.ones(5)), np.ones(5))
    np.testing.assert_allclose(relative_weights(1e-300 * w), [0.0, 1.5, 0.5, 1.0])
    np.testing.assert_allclose(relative_weights(1e300 * w), [0.0, 1.5, 0.5, 1.0])


def _counts_over_exposures(n=2000, seed=0):
    """Poisson counts over exposures spanning 10^2..10^5, and statsmodels' fit of them."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    exposure = 10 ** rng.uniform(2, 5, size=n)
    y = rng.poisson(exposure * np.exp(-6 + X @ np.array([0.3, -0.2, 0.1]))).astype(float)
    reference = sm.GLM(y, sm.add_constant(X, prepend=False), family=sm.families.Poisson(),
                       exposure=exposure).fit()
    return X, y, exposure, reference


_WIDE = dict(prior_scale=1e3, intercept_prior_scale=1e3)


def _exposure_pipeline(coreset, X, y, exposure):
    pipe = Pipeline([("coreset", coreset), ("clf", BayesianPoissonRegression(**_WIDE))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetAccuracyWarning)
        return pipe.fit(X, y, coreset__exposure=exposure)


def _rates_pipeline(coreset, X, y, exposure):
    # the scikit-learn idiom: rates y / exposure weighted by the exposure
    pipe = Pipeline([("coreset", coreset), ("clf", BayesianPoissonRegression(**_WIDE))])
    key = ("coreset__base_coreset__model" if isinstance(coreset, StreamingCoreset)
           else "coreset__model")
    pipe.set_params(**{key: "poisson"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoresetAccuracyWarning)
        return pipe.fit(X, y / exposure, coreset__sample_weight=exposure)


@pytest.mark.parametrize("idiom", [_exposure_pipeline, _rates_pipeline],
                         ids=["exposure", "rates"])
@pytest.mark.parametrize("coreset, kl_max", [
    (GIGACoreset(M=100, random_state=0), 1e-3),
    (FrankWolfeCoreset(M=100, random_state=0), 1.0),
    (GIGACoreset(M=100, weighting="laplace-subsample", random_state=0), 0.1),
    (StreamingCoreset(GIGACoreset(M=100, random_state=0), block_size=500, random_state=0),
     0.05),
])
def test_exposures_stay_in_the_weighting_distribution(coreset, kl_max, idiom):
    # counts over exposures, given as exposure= or as rates weighted by the exposure: the
    # weighting distribution is fitted on the weights as they enter the log-likelihood, so
    # that it is the all-rows posterior, not one about sqrt(mean exposure) times wider
    # (the rates idiom, when the weights were divided by their mean: 0.2-0.4 nats here, and
    # 1.6-6.8 nats on statsmodels' cancer data)
    X, y, exposure, reference = _counts_over_exposures()
    full = BayesianPoissonRegression(**_WIDE).fit(X, y, exposure=exposure)
    pipe = idiom(clone(coreset), X, y, exposure)
    clf = pipe.named_steps["clf"]
    theta = np.append(clf.coef_, clf.intercept_)
    assert posterior_kl(pipe, full) < kl_max
    assert np.max(np.abs(theta - reference.params) / reference.bse) < 1.0


@pytest.mark.parametrize("weighting", ["laplace", "laplace-subsample"])
def test_rates_weighted_by_exposure_make_the_coreset_of_counts_over_exposure(weighting):
    # fit(X, y / e, sample_weight=e) is the likelihood of fit(X, y, exposure=e): the same
    # weighting distribution (with "laplace", statsmodels' GLM with the exposure) and coreset
    X, y, exposure, reference = _counts_over_exposures(n=500)
    coreset = GIGACoreset(M=30, projection_dim=100, weighting=weighting, prior_scale=1e3,
                          intercept_prior_scale=1e3, random_state=0)
    counts = clone(coreset).fit(X, y, exposure=exposure)
    rates = clone(coreset).set_params(model="poisson")
    rates.fit(X, y / exposure, sample_weight=exposure)
    np.testing.assert_allclose(rates.weighting_posterior_.mean,
                               counts.weighting_posterior_.mean, rtol=1e-6)
    np.testing.assert_allclose(rates.weighting_posterior_.cov,
                               counts.weighting_posterior_.cov, rtol=1e-6)
    np.testing.assert_array_equal(rates.sample_indices_, counts.sample_indices_)
    np.testing.assert_allclose(rates.sample_weight_, counts.sample_weight_, rtol=1e-6)
    if weighting == "laplace":
        np.testing.assert_allclose(rates.weighting_posterior_.mean, reference.params,
                                   atol=1e-3 * np.min(reference.bse))
        np.testing.assert_allclose(np.sqrt(np.diag(rates.weighting_posterior_.cov)),
                                   reference.bse, rtol=1e-3)


# --- verbose -------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, solver", [(GIGACoreset, "giga"),
                                         (FrankWolfeCoreset, "frank_wolfe")])
def test_verbose_reports_the_stages_and_the_solver_progress(cls, solver, capsys,
                                                            monkeypatch):
    X, y = _logistic_data(n=500)
    quiet = cls(M=10, projection_dim=50, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(_progress, "PRINT_INTERVAL", 0.0)  # a solver line every iteration
    loud = cls(M=10, projection_dim=50, random_state=0, verbose=1).fit(X, y)
    np.testing.assert_array_equal(loud.sample_weight_, quiet.sample_weight_)
    lines = capsys.readouterr().out.splitlines()
    name = cls.__name__
    # what takes time before the solver: the Laplace fit and the projection, each timed
    assert lines[0] == f"[{name}] Laplace fit of the weighting distribution on 500 rows ..."
    assert lines[1].startswith(f"[{name}] weighting distribution fitted in ")
    assert lines[2] == f"[{name}] projecting 500 rows on 50 draws ..."
    assert lines[3].startswith(f"[{name}] projected in ")
    steps = [line for line in lines if line.startswith(f"[{solver}] iter")]
    assert len(steps) == len(loud.history_)
    assert steps[0].startswith(f"[{solver}] iter  1/10  size  1  relative error ")
    assert all(" elapsed " in line and " ETA " in line for line in steps)
    assert lines[-2].startswith(f"[{solver}] stop: {loud.stop_reason_}")
    assert lines[-1].startswith(f"[{name}] {len(loud.sample_indices_)} points")


def test_verbose_two_adds_the_newton_steps_of_the_weighting_fit(capsys):
    X, y = _logistic_data(n=500)
    GIGACoreset(M=5, projection_dim=50, random_state=0, verbose=2).fit(X, y)
    assert "[laplace] iter" in capsys.readouterr().out


def test_rates_on_dask_chunks_get_the_weighting_distribution_of_counts_in_memory():
    da = pytest.importorskip("dask.array")
    X, y, exposure, _ = _counts_over_exposures(n=2000)
    coreset = GIGACoreset(M=30, projection_dim=100, random_state=0)
    in_memory = clone(coreset).fit(X, y, exposure=exposure).weighting_posterior_
    chunked = [da.from_array(a, chunks=(500,) + a.shape[1:]) for a in (X, y, exposure)]
    for posterior in (
            clone(coreset).fit(*chunked[:2], exposure=chunked[2]).weighting_posterior_,
            clone(coreset).set_params(model="poisson").fit(
                chunked[0], chunked[1] / chunked[2],
                sample_weight=chunked[2]).weighting_posterior_):
        np.testing.assert_allclose(posterior.mean, in_memory.mean, rtol=1e-8)
        np.testing.assert_allclose(posterior.cov, in_memory.cov, rtol=1e-6)


# --- merge-reduce ----------------------------------------------------------------------------

def test_merged_coreset_weights_are_those_of_the_data():
    # the weights of a merge-reduce coreset of Hilbert blocks weigh the rows' projected
    # log-likelihoods (under the stream's shared draws) against their exact sum over all
    # rows, computed here from the rows themselves: a block coreset of wrong weights or a
    # merge that weighted a part twice would leave error_ and this sum apart
    X, y = _logistic_data()
    sample_weight = np.where(np.arange(len(y)) % 3 == 0, 3.0, 0.5)
    stream = StreamingCoreset(GIGACoreset(M=50, projection_dim=50), block_size=200,
                              random_state=0).fit(X, y, sample_weight=sample_weight)
    vectors = project_loglik(X, np.where(y > 0, 1.0, -1.0), sample_weight, LogisticFamily(),
                             stream._stream.context.thetas, True)
    weights = np.zeros(len(y))
    weights[stream.sample_indices_] = stream.sample_weight_ / sample_weight[
        stream.sample_indices_]
    target = vectors.sum(axis=0)
    error = np.linalg.norm(target - weights @ vectors) / np.linalg.norm(target)
    np.testing.assert_allclose(stream.error_, error, rtol=1e-5)
    # no worse in the projection than GIGA on all the rows at once under the same draws
    assert error < 1.2 * giga(vectors, n_iter=50).error
