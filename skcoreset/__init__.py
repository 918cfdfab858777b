"""skcoreset: Bayesian coresets and Bayesian GLMs for scikit-learn."""

from ._posterior import GaussianPosterior, SamplePosterior
from .coreset import (FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, SensitivityCoreset,
                      SparseVICoreset, SparseWeightedSubset, StreamingCoreset, UniformCoreset,
                      WeightedSubset)
from .linear_model import (BayesianBinaryRegression, BayesianLogisticRegression,
                           BayesianNegativeBinomialRegression, BayesianPoissonRegression,
                           BayesianProbitRegression)
from ._psis import LooResult
from ._summary import CredibleIntervals, PosteriorSummary
from .multiclass import BayesianOneVsRestClassifier

__version__ = "0.1.0.dev0"

__all__ = [
    "BayesianBinaryRegression",
    "BayesianLogisticRegression",
    "BayesianNegativeBinomialRegression",
    "BayesianOneVsRestClassifier",
    "BayesianPoissonRegression",
    "BayesianProbitRegression",
    "CredibleIntervals",
    "FrankWolfeCoreset",
    "GIGACoreset",
    "GaussianPosterior",
    "LooResult",
    "PosteriorSummary",
    "QuasiNewtonCoreset",
    "SamplePosterior",
    "SensitivityCoreset",
    "SparseVICoreset",
    "SparseWeightedSubset",
    "StreamingCoreset",
    "UniformCoreset",
    "WeightedSubset",
    "__version__",
]
