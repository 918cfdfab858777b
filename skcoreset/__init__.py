"""skcoreset: Bayesian coresets and Bayesian GLMs for scikit-learn."""

from ._posterior import GaussianPosterior
from .linear_model import BayesianLogisticRegression, BayesianPoissonRegression

__version__ = "0.1.0.dev0"

__all__ = ["BayesianLogisticRegression", "BayesianPoissonRegression", "GaussianPosterior",
           "__version__"]
