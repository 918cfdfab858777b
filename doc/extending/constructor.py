"""A new coreset constructor: leverage-score sampling (the worked example of "Adding a
coreset constructor" in doc/extending.rst)."""

import numpy as np

from sklearn.linear_model import LinearRegression

from skcoreset import UniformCoreset
from skcoreset.coreset import BaseCoreset
from skcoreset.coreset._docs import fill_sampling_doc
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import Pipeline


# --- 1. the constructor: one hook, (indices, weights) of validated, encoded rows ----------
@fill_sampling_doc
class LeverageCoreset(BaseCoreset):
    """Coreset of M rows drawn with probability half uniform, half proportional to their
    weighted leverage ``h_n = x_n^T (X^T W X)^-1 x_n``; each drawn row weighs
    ``w_n / (M p_n)`` per draw, so the coreset's log-likelihood is unbiased.

    Parameters
    ----------
    M : int, default=100
        Number of draws (repeated rows are merged: the coreset may be smaller).
    {common_params}
    Attributes
    ----------
    {common_attrs}
    """

    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        design = np.column_stack([X, np.ones(len(X))]) if self.fit_intercept else X
        # leverages from a thin QR of sqrt(w) X: the squared row norms of Q
        q = np.linalg.qr(np.sqrt(sample_weight)[:, None] * design)[0]
        leverage = np.sum(q**2, axis=1)
        p = 0.5 * (sample_weight > 0) / np.count_nonzero(sample_weight)
        p += 0.5 * leverage / leverage.sum()
        draws = rng.choice(len(X), size=self.M, p=p / p.sum())
        indices, counts = np.unique(draws, return_counts=True)
        return indices, sample_weight[indices] * counts / (self.M * p[indices] / p.sum())


# --- 2. use: everything else (validation, models, dask, pipelines) comes from the base -----
def main():
    # linear regression, where leverage is what a row contributes to the posterior
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 4)) * np.exp(rng.normal(size=(20_000, 1)))  # heavy rows
    y = X @ [0.5, -0.4, 0.3, 0.2] + rng.normal(size=20_000)

    coreset = LeverageCoreset(M=500, model="gaussian", random_state=0).fit(X, y)
    assert "{common_params}" not in LeverageCoreset.__doc__  # the decorator filled it
    assert coreset.model_ == "gaussian" and len(coreset.sample_indices_) <= 500
    # unbiased total weight: within a few percent of the 20,000 rows
    assert abs(coreset.sample_weight_.sum() / 20_000 - 1) < 0.1
    # better than uniform rows of the same budget when a few rows hold the likelihood
    quality = coreset_quality(coreset, X, y)
    uniform = coreset_quality(
        UniformCoreset(M=500, model="gaussian", random_state=0).fit(X, y), X, y)
    assert quality.kl < uniform.kl / 3, (quality.kl, uniform.kl)
    # and in a pipeline with any final step that takes sample_weight
    pipe = Pipeline([("coreset", LeverageCoreset(M=500, model="gaussian", random_state=0)),
                     ("reg", LinearRegression())]).fit(X, y)
    assert pipe.score(X, y) > 0.5
    return quality, uniform


if __name__ == "__main__":
    print(main())
