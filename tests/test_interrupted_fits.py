"""A fit either completes or leaves the object as it was.

Every public estimator, constructor and the pipeline is refitted on new data (other rows and
another number of features) and interrupted by a ``KeyboardInterrupt`` raised at the k-th
Python function call inside the fit, for several k spread over the whole fit; afterwards the
object must be exactly what it was before (same pickled state, same predictions). Streams
(``partial_fit``) must add a block completely or not at all: after an interrupted call,
re-sending the block gives the result of an uninterrupted stream.
"""

import copy
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, FrankWolfeCoreset, GIGACoreset,
                       QuasiNewtonCoreset, SensitivityCoreset, SparseVICoreset,
                       StreamingCoreset, UniformCoreset)
from skcoreset._testing import Interrupt
from skcoreset.multiclass import BayesianOneVsRestClassifier
from skcoreset.pipeline import Pipeline

_MCMC = dict(n_draws=20, n_burnin=4, thin=1, random_state=0)


def _data(n, d, seed, counts=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    eta = X @ np.linspace(1.0, -0.5, d)
    y = rng.poisson(np.exp(0.5 * eta)) if counts else (eta + rng.logistic(size=n) > 0)
    return X, y.astype(int)


def _interrupt_points(obj, method, *args, n_points=6):
    """Call numbers spread over an uninterrupted ``obj.method(*args)`` (on copies of
    ``obj``), from its first call to its last."""
    getattr(copy.deepcopy(obj), method)(*args)  # first calls fill caches: count a warm run
    run = getattr(copy.deepcopy(obj), method)
    with Interrupt() as counter:
        run(*args)
    return np.unique(np.linspace(1, counter.calls, n_points).astype(int)).tolist()


def _state(obj):
    return joblib.hash(obj)


COUNTS = {"poisson", "negative_binomial"}
CASES = {
    "uniform": (UniformCoreset(M=10, random_state=0), False),
    "sensitivity": (SensitivityCoreset(M=10, n_clusters=2, random_state=0), False),
    "giga": (GIGACoreset(M=10, projection_dim=20, random_state=0), False),
    "frank_wolfe": (FrankWolfeCoreset(M=10, projection_dim=20, random_state=0), False),
    "sparsevi": (SparseVICoreset(M=4, n_draws=10, n_iter_opt=3, random_state=0), False),
    "quasi_newton": (QuasiNewtonCoreset(M=10, random_state=0), False),
    "streaming_giga": (StreamingCoreset(GIGACoreset(M=10, projection_dim=20), block_size=30,
                                        random_state=0), False),
    "logistic_laplace": (BayesianLogisticRegression(), False),
    "logistic_kl_proximal": (BayesianLogisticRegression(method="kl_proximal"), False),
    "logistic_pass_glm": (BayesianLogisticRegression(method="pass_glm"), False),
    "logistic_mcmc": (BayesianLogisticRegression(method="mcmc", **_MCMC), False),
    "poisson": (BayesianPoissonRegression(), True),
    "negative_binomial": (BayesianNegativeBinomialRegression(), True),
    "one_vs_rest": (BayesianOneVsRestClassifier(), False),
    "pipeline": (Pipeline([("coreset", UniformCoreset(M=20, random_state=0)),
                           ("clf", BayesianLogisticRegression())]), False),
}


def _outputs(obj, X):
    """What a user reads of a fitted object."""
    if hasattr(obj, "sample_indices_"):
        return obj.sample_indices_, obj.sample_weight_, obj.transform(X)
    return obj.predict(X)


@pytest.mark.parametrize("name", CASES)
def test_an_interrupted_refit_leaves_the_previous_fit(name):
    template, counts = CASES[name]
    X_old, y_old = _data(60, 3, seed=0, counts=counts)
    X_new, y_new = _data(90, 4, seed=1, counts=counts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short MCMC runs and model="auto" notes
        for original in (clone(template), clone(template).fit(X_old, y_old)):
            points = _interrupt_points(original, "fit", X_new, y_new)
            before = _state(original)
            fitted = hasattr(original, "n_features_in_")
            expected = _outputs(original, X_old) if fitted else None
            interrupted = 0
            for at in points:
                obj = copy.deepcopy(original)
                try:
                    with Interrupt(at):
                        obj.fit(X_new, y_new)
                    continue  # call counts may differ slightly from the counted run
                except KeyboardInterrupt:
                    interrupted += 1
                assert _state(obj) == before, (name, at)
                if expected is not None:
                    for got, want in zip(_outputs(obj, X_old), expected):
                        np.testing.assert_array_equal(got, want)
            assert interrupted >= len(points) - 1
        # and the object still fits
        clone(template).fit(X_new, y_new)


@pytest.mark.parametrize("make", [
    lambda: StreamingCoreset(UniformCoreset(M=10), block_size=20, random_state=0),
    lambda: StreamingCoreset(GIGACoreset(M=10, projection_dim=20), block_size=20,
                             random_state=0),
    lambda: BayesianLogisticRegression(method="pass_glm"),
], ids=["streaming_uniform", "streaming_giga", "pass_glm"])
def test_an_interrupted_partial_fit_adds_its_block_completely_or_not_at_all(make):
    X, y = _data(120, 3, seed=2)
    blocks = [slice(0, 40), slice(40, 80), slice(80, 120)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = make()
        for rows in blocks:
            reference.partial_fit(X[rows], y[rows], classes=[0, 1])
        started = make().partial_fit(X[:40], y[:40], classes=[0, 1])
        points = _interrupt_points(started, "partial_fit", X[40:80], y[40:80])
        for at in points[:-1]:
            stream = copy.deepcopy(started)
            with pytest.raises(KeyboardInterrupt):
                with Interrupt(at):
                    stream.partial_fit(X[40:80], y[40:80])
            assert _state(stream) == _state(started), at
            for rows in blocks[1:]:  # re-send the interrupted block, then the next
                stream.partial_fit(X[rows], y[rows])
            assert _state(stream) == _state(reference), at
