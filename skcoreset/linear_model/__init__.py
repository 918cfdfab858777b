"""Bayesian generalized linear models as scikit-learn estimators.

:class:`BayesianLogisticRegression`, :class:`BayesianProbitRegression`,
:class:`BayesianBinaryRegression` (any binary link),
:class:`BayesianPoissonRegression` and :class:`BayesianNegativeBinomialRegression` fit a
posterior over ``theta = [coef..., intercept]`` under the prior ``N(0, prior_scale^2 I)`` on
the coefficients and ``N(0, intercept_prior_scale^2)`` on the intercept. ``sample_weight``
multiplies each point's log-likelihood, unnormalised: a weight of 2 is the same as the row
appearing twice, so the weighted subsets returned by the coreset constructors stand in for
the full data.

Modules: ``_methods`` (the method table, from which the estimators' parameters, constraints,
docs and typed ``__init__`` follow), ``_codegen`` (writes those ``__init__``), ``_base`` (what
every estimator shares), ``_binary`` (the classifiers), ``_regression`` (what every regressor
shares), ``_count`` (the count regressions).
"""

from ._binary import (BayesianBinaryRegression, BayesianLogisticRegression,
                      BayesianProbitRegression)
from ._count import BayesianNegativeBinomialRegression, BayesianPoissonRegression

__all__ = ["BayesianBinaryRegression", "BayesianLogisticRegression",
           "BayesianNegativeBinomialRegression", "BayesianPoissonRegression",
           "BayesianProbitRegression"]
