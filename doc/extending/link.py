"""A new binary link: the cauchit link, whose inverse is the Cauchy distribution function
(the worked example of "Adding a link" in doc/extending.rst)."""

import numpy as np
import statsmodels.api as sm
from scipy import stats

from skcoreset import BayesianBinaryRegression, QuasiNewtonCoreset
from skcoreset.families import Link, binary_family


# --- 1. the link: the map, its inverse and the inverse's first two derivatives --------------
class CauchitLink(Link):
    """``p = 1/2 + arctan(eta) / pi``: heavy tails, so a badly misclassified row costs
    only ``log |eta|`` (robust to mislabelled rows)."""

    name = "cauchit"
    cdf = True  # the inverse is a distribution function onto (0, 1): a binary link
    symmetric = True  # F(-eta) = 1 - F(eta): the binary family's fast form applies

    def __call__(self, mean):
        return np.tan(np.pi * (np.asarray(mean, dtype=float) - 0.5))

    def inverse(self, eta):
        return 0.5 + np.arctan(eta) / np.pi

    def inverse_derivatives(self, eta, mean=None):
        eta = np.asarray(eta, dtype=float)
        density = 1.0 / (np.pi * (1.0 + eta**2))
        return density, -2.0 * eta * np.pi * density**2

    # log F and its derivatives default to log(inverse) and ratios of the derivatives;
    # a link whose inverse underflows in a tail overrides log_inverse (and, if asymmetric,
    # log_complement) with a stable form, as CLogLogLink does


# --- 2. use: the estimator takes the instance, the constructors its family -----------------
def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 2))
    y = (rng.random(3000) < stats.cauchy.cdf(X @ [1.5, -1.0] + 0.3)).astype(int)

    clf = BayesianBinaryRegression(link=CauchitLink(), prior_scale=1e4,
                                   intercept_prior_scale=1e4).fit(X, y)
    glm = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial(
        link=sm.families.links.Cauchy())).fit(tol=1e-12)
    np.testing.assert_allclose(clf.intercept_, glm.params[:1], atol=1e-5)
    np.testing.assert_allclose(clf.coef_[0], glm.params[1:], atol=1e-5)
    for method in ("kl_proximal", "mcmc"):  # every method but PASS-GLM (a clear error)
        BayesianBinaryRegression(link=CauchitLink(), method=method, n_draws=200,
                                 random_state=0).fit(X, y)

    family = binary_family(CauchitLink())
    coreset = QuasiNewtonCoreset(M=200, model=family, random_state=0).fit(X, y)
    assert coreset.model_ == "cauchit" and coreset.kl_estimate_ < 0.1
    return clf


if __name__ == "__main__":
    print(main().coef_)
