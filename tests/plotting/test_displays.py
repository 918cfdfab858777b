"""The displays draw what they compute, and what they compute is checked by hand: the
growth path of a coreset, posterior means and normal-quantile intervals, calibration bins
counted with numpy.histogram."""

import sys

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       QuasiNewtonCoreset, UniformCoreset)
from skcoreset.datasets import make_logistic_regression, make_poisson_regression
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import Pipeline
from skcoreset.plotting import (CoresetAccuracyDisplay, PosteriorComparisonDisplay,
                                PredictiveCalibrationDisplay)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    X, y = make_logistic_regression(3000, n_features=4, random_state=0)
    return X, y


@pytest.fixture(scope="module")
def fitted(data):
    X, y = data
    return BayesianLogisticRegression().fit(X, y)


# -- CoresetAccuracyDisplay -------------------------------------------------------------------

def test_coreset_accuracy_plots_the_growth_path(data):
    X, y = data
    # a target below what the first size reaches: the coreset grows over several sizes
    coreset = QuasiNewtonCoreset(target_kl=1e-12, max_rows=800, random_state=0)
    with pytest.warns(UserWarning, match="stopped growing"):
        coreset.fit(X, y)
    assert len(coreset.kl_path_) > 1
    display = CoresetAccuracyDisplay.from_coreset(coreset)
    np.testing.assert_array_equal(display.line_.get_xdata(), coreset.kl_path_[:, 0])
    np.testing.assert_array_equal(display.line_.get_ydata(), coreset.kl_path_[:, 1])
    assert display.target_line_.get_ydata()[0] == 1e-12
    assert display.ax_.get_xscale() == "log" and display.ax_.get_yscale() == "log"
    assert display.figure_ is display.ax_.figure
    assert "nats" in display.ax_.get_ylabel()


def test_coreset_accuracy_integer_M_has_one_point_and_no_target(data):
    X, y = data
    coreset = QuasiNewtonCoreset(M=300, random_state=0).fit(X, y)
    fig, ax = plt.subplots()
    display = CoresetAccuracyDisplay.from_coreset(coreset, ax=ax, name="QN")
    assert display.ax_ is ax and display.figure_ is fig
    assert display.target_line_ is None
    np.testing.assert_array_equal(display.line_.get_ydata(), coreset.kl_path_[:, 1])
    assert display.line_.get_label() == "QN"


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
def test_coreset_accuracy_from_estimator_equals_coreset_quality(data):
    X, y = data
    display = CoresetAccuracyDisplay.from_estimator(
        UniformCoreset(random_state=3), X, y, sizes=[400, 100], target_kl=0.1)
    expected = []
    for M in (100, 400):  # sorted
        quality = coreset_quality(UniformCoreset(M=M, random_state=3).fit(X, y), X, y)
        expected.append((quality.size, quality.kl))
    np.testing.assert_allclose(np.column_stack([display.line_.get_xdata(),
                                                display.line_.get_ydata()]), expected)
    assert display.line_.get_label() == "UniformCoreset"
    assert display.target_line_ is not None


@pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")
@pytest.mark.filterwarnings("ignore:QuasiNewtonCoreset. M=3000:UserWarning")
def test_coreset_accuracy_refuses_bad_input(data):
    X, y = data
    with pytest.raises(NotFittedError):
        CoresetAccuracyDisplay.from_coreset(QuasiNewtonCoreset())
    with pytest.raises(TypeError, match="kl_path_"):
        CoresetAccuracyDisplay.from_coreset(UniformCoreset(M=50, random_state=0).fit(X, y))
    whole = QuasiNewtonCoreset(M=len(X)).fit(X, y)
    with pytest.raises(ValueError, match="every row"):
        CoresetAccuracyDisplay.from_coreset(whole)
    with pytest.raises(TypeError, match="M parameter"):
        CoresetAccuracyDisplay.from_estimator(LogisticRegression(), X, y, sizes=[10])
    for sizes in ([], [0, 10], [10.5], [[10, 20]]):
        with pytest.raises(ValueError, match="sizes"):
            CoresetAccuracyDisplay.from_estimator(UniformCoreset(), X, y, sizes=sizes)
    with pytest.raises(TypeError, match="ax"):
        CoresetAccuracyDisplay(sizes=[1, 2], kl=[1.0, 0.5]).plot(ax="axes")


# -- PosteriorComparisonDisplay ---------------------------------------------------------------

def test_posterior_comparison_draws_means_and_intervals(data, fitted):
    X, y = data
    small = BayesianLogisticRegression().fit(X[:300], y[:300])
    display = PosteriorComparisonDisplay.from_estimators(
        {"all rows": fitted, "300 rows": small}, feature_names=["a", "b", "c", "d"],
        level=0.9)
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == \
        ["a", "b", "c", "d", "intercept"]
    z = norm.ppf(0.95)
    for name, estimator in (("all rows", fitted), ("300 rows", small)):
        container = display.errorbars_[name]
        mean = estimator.posterior_.mean
        sd = np.sqrt(np.diag(estimator.posterior_.cov))
        np.testing.assert_allclose(container.lines[0].get_xdata(), mean)
        # the interval bars: horizontal segments from mean - z sd to mean + z sd
        segments = np.array(container.lines[2][0].get_segments())
        np.testing.assert_allclose(segments[:, 0, 0], mean - z * sd, rtol=1e-10)
        np.testing.assert_allclose(segments[:, 1, 0], mean + z * sd, rtol=1e-10)
        assert container.get_label() == name
    # both fits of a parameter on its row, the first above the second
    rows_all = display.errorbars_["all rows"].lines[0].get_ydata()
    rows_small = display.errorbars_["300 rows"].lines[0].get_ydata()
    np.testing.assert_allclose(rows_small - rows_all, 0.6)


def test_posterior_comparison_names_pipelines_and_intercept(data, fitted):
    X, y = data
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=300, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    display = PosteriorComparisonDisplay.from_estimators(
        {"coreset": pipe, "all": fitted}, include_intercept=False)
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["x0", "x1", "x2", "x3"]
    np.testing.assert_allclose(display.errorbars_["coreset"].lines[0].get_xdata(),
                               np.ravel(pipe[-1].coef_))


def test_posterior_comparison_refuses_bad_input(data, fitted):
    X, y = data
    with pytest.raises(TypeError, match="non-empty dict"):
        PosteriorComparisonDisplay.from_estimators([fitted])
    with pytest.raises(TypeError, match="non-empty dict"):
        PosteriorComparisonDisplay.from_estimators({})
    with pytest.raises(NotFittedError):
        PosteriorComparisonDisplay.from_estimators({"a": BayesianLogisticRegression()})
    with pytest.raises(TypeError, match="posterior_"):
        PosteriorComparisonDisplay.from_estimators({"a": LogisticRegression().fit(X, y)})
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        PosteriorComparisonDisplay.from_estimators({"a": fitted}, feature_names=["a", "b"])
    other = BayesianLogisticRegression().fit(X[:, :3], y)
    with pytest.raises(ValueError, match="same model"):
        PosteriorComparisonDisplay.from_estimators({"a": fitted, "b": other})
    with pytest.raises(ValueError, match="level"):
        PosteriorComparisonDisplay.from_estimators({"a": fitted}, level=95)


# -- PredictiveCalibrationDisplay -------------------------------------------------------------

def _by_hand(y01, prob, edges, draws01=None, level=0.95):
    """Calibration points (and band) counted with numpy.histogram."""
    counts = np.histogram(prob, edges)[0]
    keep = counts > 0
    prob_true = np.histogram(prob, edges, weights=y01)[0][keep] / counts[keep]
    prob_pred = np.histogram(prob, edges, weights=prob)[0][keep] / counts[keep]
    if draws01 is None:
        return prob_true, prob_pred
    freq = np.array([np.histogram(prob, edges, weights=d)[0][keep] / counts[keep]
                     for d in draws01])
    return prob_true, prob_pred, *np.quantile(freq, [(1 - level) / 2, (1 + level) / 2],
                                              axis=0)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_points_equal_a_histogram(strategy):
    rng = np.random.default_rng(0)
    prob = rng.beta(0.5, 0.5, 2000)
    prob[:3] = [0.0, 1.0, 0.5]  # the edges fall in the bins numpy.histogram puts them in
    y = np.where(rng.random(2000) < prob ** 1.3, "yes", "no")
    draws = np.where(rng.random((50, 2000)) < prob, "yes", "no")
    display = PredictiveCalibrationDisplay.from_predictions(
        y, prob, y_draws=draws, n_bins=7, strategy=strategy, level=0.8)
    edges = (np.linspace(0, 1, 8) if strategy == "uniform"
             else np.r_[0.0, np.quantile(prob, np.linspace(0, 1, 8))[1:-1], 1.0])
    expected = _by_hand((y == "yes").astype(float), prob, edges,
                        (draws == "yes").astype(float), level=0.8)
    for got, want in zip((display.prob_true, display.prob_pred, display.band_lower,
                          display.band_upper), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(display.line_.get_xdata(), expected[1])
    np.testing.assert_allclose(display.line_.get_ydata(), expected[0])
    assert "positive class: yes" in display.ax_.get_xlabel()


def test_calibration_from_estimator_uses_the_posterior_predictive(data, fitted):
    X, y = data
    display = PredictiveCalibrationDisplay.from_estimator(fitted, X, y, n_draws=40,
                                                          random_state=7)
    draws = fitted.sample_y(X, 40, random_state=7)
    prob = fitted.predict_proba(X)[:, 1]
    expected = _by_hand(y.astype(float), prob, np.linspace(0, 1, 11), draws.astype(float))
    for got, want in zip((display.prob_true, display.prob_pred, display.band_lower,
                          display.band_upper), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert display.band_ is not None and display.line_.get_label() == \
        "BayesianLogisticRegression"


def test_calibration_band_covers_a_calibrated_model_and_not_a_miscalibrated_one():
    X, y = make_logistic_regression(6000, n_features=3, random_state=1)
    clf = BayesianLogisticRegression().fit(X[:3000], y[:3000])
    good = PredictiveCalibrationDisplay.from_estimator(clf, X[3000:], y[3000:],
                                                       random_state=0)
    inside = (good.band_lower <= good.prob_true) & (good.prob_true <= good.band_upper)
    assert inside.mean() >= 0.8
    # overconfident probabilities (the linear predictor doubled): points leave the band
    over = PredictiveCalibrationDisplay.from_predictions(
        y[3000:], clf.predict_proba(2 * X[3000:])[:, 1],
        y_draws=clf.sample_y(2 * X[3000:], 200, random_state=0))
    outside = (over.prob_true < over.band_lower) | (over.prob_true > over.band_upper)
    assert outside.sum() >= 4


def test_calibration_through_a_coreset_pipeline(data):
    X, y = data
    pipe = Pipeline([("coreset", QuasiNewtonCoreset(M=300, random_state=0)),
                     ("clf", BayesianLogisticRegression())]).fit(X, y)
    display = PredictiveCalibrationDisplay.from_estimator(pipe, X, y, n_draws=20,
                                                          random_state=0)
    direct = PredictiveCalibrationDisplay.from_estimator(pipe[-1], X, y, n_draws=20,
                                                         random_state=0)
    np.testing.assert_array_equal(display.band_lower, direct.band_lower)
    np.testing.assert_array_equal(display.prob_pred, direct.prob_pred)


def test_calibration_of_dask_rows(data, fitted):
    da = pytest.importorskip("dask.array")
    X, y = data
    eager = PredictiveCalibrationDisplay.from_estimator(fitted, X, y, n_draws=200,
                                                        random_state=0)
    lazy = PredictiveCalibrationDisplay.from_estimator(
        fitted, da.from_array(X, chunks=1000), da.from_array(y, chunks=1000),
        n_draws=200, random_state=0)
    np.testing.assert_allclose(lazy.prob_true, eager.prob_true, rtol=1e-12)
    np.testing.assert_allclose(lazy.prob_pred, eager.prob_pred, rtol=1e-12)
    # other random streams (one per block of rows): the same band up to Monte Carlo noise
    np.testing.assert_allclose(lazy.band_lower, eager.band_lower, atol=0.04)
    np.testing.assert_allclose(lazy.band_upper, eager.band_upper, atol=0.04)


def test_calibration_refuses_bad_input(data, fitted):
    X, y = data
    prob = fitted.predict_proba(X)[:, 1]
    with pytest.raises(NotFittedError):
        PredictiveCalibrationDisplay.from_estimator(BayesianLogisticRegression(), X, y)
    counts_X, counts_y = make_poisson_regression(200, n_features=2, random_state=0)
    poisson = BayesianPoissonRegression().fit(counts_X, counts_y)
    with pytest.raises(TypeError, match="binary classifier"):
        PredictiveCalibrationDisplay.from_estimator(poisson, counts_X, counts_y)
    with pytest.raises(ValueError, match="outside the classes"):
        PredictiveCalibrationDisplay.from_estimator(fitted, X, y + 2)
    for bad in ({"n_bins": 0}, {"n_bins": 2.5}, {"n_draws": 1}, {"level": 1.0},
                {"strategy": "kmeans"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            PredictiveCalibrationDisplay.from_estimator(fitted, X, y, **bad)
    with pytest.raises(ValueError, match="y_prob"):
        PredictiveCalibrationDisplay.from_predictions(y, prob + 0.5)
    with pytest.raises(ValueError, match="two classes"):
        PredictiveCalibrationDisplay.from_predictions(np.arange(len(y)) % 3, prob)
    with pytest.raises(ValueError, match="pos_label"):
        PredictiveCalibrationDisplay.from_predictions(y, prob, pos_label=5)
    with pytest.raises(ValueError, match="y_draws"):
        PredictiveCalibrationDisplay.from_predictions(y, prob, y_draws=y[None, :-1])
    with pytest.raises(ValueError, match="inconsistent"):
        PredictiveCalibrationDisplay.from_predictions(y[:-1], prob)


def test_without_matplotlib_the_error_says_how_to_install(monkeypatch, fitted):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"skcoreset\[plot\]"):
        PosteriorComparisonDisplay.from_estimators({"a": fitted})


# -- MCMCDiagnosticsDisplay -------------------------------------------------------------------

@pytest.fixture(scope="module")
def mcmc_fit():
    X, y = make_logistic_regression(400, n_features=2, random_state=1)
    return BayesianLogisticRegression(method="mcmc", n_draws=450, n_burnin=150, n_chains=3,
                                      random_state=0).fit(X, y)


def test_mcmc_diagnostics_draws_each_chain_and_its_ranks(mcmc_fit):
    from scipy.stats import rankdata

    from skcoreset.plotting import MCMCDiagnosticsDisplay

    display = MCMCDiagnosticsDisplay.from_estimator(mcmc_fit, n_bins=10)
    assert display.axes_.shape == (3, 2) and display.trace_lines_.shape == (3, 3)
    # the draws of chain c are the c-th of each step (the chains are stored step by step)
    samples = mcmc_fit.posterior_samples_
    steps = len(samples) // 3
    samples = samples[len(samples) - 3 * steps:].reshape(steps, 3, 3)
    for j in range(3):
        ranks = rankdata(samples[:, :, j], axis=None).reshape(steps, 3)
        for c in range(3):
            np.testing.assert_array_equal(display.trace_lines_[j, c].get_ydata(),
                                          samples[:, c, j])
            counts = np.histogram(ranks[:, c], bins=np.linspace(0.5, 3 * steps + 0.5, 11))[0]
            np.testing.assert_array_equal(display.rank_lines_[j, c].get_ydata()[:-1], counts)
        title = display.axes_[j, 0].get_title(loc="left")
        assert f"R-hat {mcmc_fit.r_hat_[j]:.3f}" in title
        assert f"ESS {mcmc_fit.effective_sample_size_[j]:.0f}" in title
    assert [display.axes_[j, 0].get_title(loc="left").split()[0] for j in range(3)] == [
        "x0", "x1", "intercept"]


def test_mcmc_diagnostics_selects_names_and_divides_one_axes(mcmc_fit):
    from skcoreset.plotting import MCMCDiagnosticsDisplay

    fig, ax = plt.subplots()
    display = MCMCDiagnosticsDisplay.from_estimator(
        mcmc_fit, parameters=["intercept", 0], feature_names=["age", "dose"], ax=ax)
    assert display.axes_.shape == (2, 2) and display.figure_ is fig
    assert display.axes_[0, 0].get_title(loc="left").startswith("intercept")
    assert display.axes_[1, 0].get_title(loc="left").startswith("age")
    again = display.plot(ax=plt.subplots(2, 2)[1])  # drawn again from its values
    assert again.axes_.shape == (2, 2)
    with pytest.raises(ValueError, match="Unknown parameter 'dose2'"):
        MCMCDiagnosticsDisplay.from_estimator(mcmc_fit, parameters=["dose2"],
                                              feature_names=["age", "dose"])
    with pytest.raises(ValueError, match="shape \\(3, 2\\)"):
        MCMCDiagnosticsDisplay.from_estimator(mcmc_fit, ax=plt.subplots(2, 2)[1])


def test_mcmc_diagnostics_refuses_a_gaussian_posterior(fitted):
    from skcoreset.plotting import MCMCDiagnosticsDisplay

    with pytest.raises(TypeError, match="method='mcmc'"):
        MCMCDiagnosticsDisplay.from_estimator(fitted)
    with pytest.raises(NotFittedError):
        MCMCDiagnosticsDisplay.from_estimator(BayesianLogisticRegression(method="mcmc"))


def test_mcmc_diagnostics_refuses_exactly_corrected_draws(mcmc_fit):
    from skcoreset.plotting import MCMCDiagnosticsDisplay

    pipe = Pipeline([("clf", mcmc_fit)])
    pipe.exact_corrected_ = True  # as a fit with exact_correction=True sets it
    with pytest.raises(ValueError, match="not chains"):
        MCMCDiagnosticsDisplay.from_estimator(pipe)
