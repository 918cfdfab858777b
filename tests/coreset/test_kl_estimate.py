"""Every constructor reports its distance to the full data's posterior (``kl_estimate_``,
nats) and warns when it is more than 1 nat."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone

from skcoreset import (BayesianNegativeBinomialRegression, FrankWolfeCoreset, GIGACoreset,
                       QuasiNewtonCoreset, SensitivityCoreset, SparseVICoreset,
                       StreamingCoreset, UniformCoreset)
from skcoreset.exceptions import CoresetAccuracyWarning
from skcoreset.metrics import coreset_quality

CONSTRUCTORS = [UniformCoreset(M=60, random_state=0), SensitivityCoreset(M=60, random_state=0),
                GIGACoreset(M=60, random_state=0), FrankWolfeCoreset(M=60, random_state=0),
                SparseVICoreset(M=20, n_iter_opt=20, random_state=0),
                QuasiNewtonCoreset(M=60, random_state=0),
                StreamingCoreset(UniformCoreset(M=60), block_size=500, random_state=0)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (rng.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -1.0, 0.5] + 0.3)))).astype(int)
    return X, y


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=lambda c: type(c).__name__)
def test_kl_estimate_is_the_laplace_kl_to_the_full_posterior(coreset, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        fitted = clone(coreset).fit(X, y)
    # coreset_quality fits both Laplace approximations from scratch
    assert fitted.kl_estimate_ == pytest.approx(coreset_quality(fitted, X, y).kl, rel=1e-4,
                                                abs=1e-8)


def test_far_coreset_warns_with_the_number_and_the_fix(data):
    X, y = data
    coreset = UniformCoreset(M=15, random_state=0)
    with pytest.warns(CoresetAccuracyWarning, match=r"UniformCoreset: the coreset posterior is "
                      r"an estimated [0-9.]+ nats .* Increase M \(now 15\), or use "
                      r"QuasiNewtonCoreset") as record:
        coreset.fit(X, y)
    assert coreset.kl_estimate_ > 1.0
    assert f"{coreset.kl_estimate_:.3g} nats" in str(record[0].message)
    with warnings.catch_warnings():  # a close one is silent
        warnings.simplefilter("error", CoresetAccuracyWarning)
        close = QuasiNewtonCoreset(random_state=0).fit(X, y)
    assert close.kl_estimate_ < 0.1


def test_kl_estimate_is_under_the_model_the_coreset_is_used_with():
    """In a Pipeline before a negative binomial estimator, the distance is measured under
    the negative binomial model: the Poisson coreset's distance does not say how far the
    negative binomial posterior on it is."""
    from skcoreset.pipeline import Pipeline

    rng = np.random.default_rng(1)
    X = rng.normal(size=(5000, 3))
    mu = np.exp(1.0 + X @ [0.3, -0.2, 0.1])
    y = rng.negative_binomial(1.0, 1 / (1 + mu)).astype(float)  # alpha = 1
    pipe = Pipeline([("coreset", UniformCoreset(M=200, random_state=0)),
                     ("reg", BayesianNegativeBinomialRegression(alpha=1.0))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pipe.fit(X, y)
    coreset = pipe.named_steps["coreset"]
    assert coreset.model_ == "negative_binomial"
    reg = pipe.named_steps["reg"]
    full = BayesianNegativeBinomialRegression(alpha=1.0).fit(X, y)
    from skcoreset.metrics import posterior_kl
    assert coreset.kl_estimate_ == pytest.approx(posterior_kl(reg, full), rel=1e-4)


def test_partial_fit_drops_a_stale_estimate(data):
    X, y = data
    stream = StreamingCoreset(UniformCoreset(M=200), block_size=500, random_state=0)
    stream.fit(X, y)
    assert hasattr(stream, "kl_estimate_")
    stream.partial_fit(X[:600], y[:600])
    assert not hasattr(stream, "kl_estimate_")
