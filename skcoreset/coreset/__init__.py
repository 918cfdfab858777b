"""Coreset constructors: transformers that build a small weighted subset of the training data
whose weighted log-likelihood stands in for the full data's."""

from ._base import BaseCoreset
from ._hilbert import FrankWolfeCoreset, GIGACoreset
from ._quasi_newton import QuasiNewtonCoreset
from ._sensitivity import SensitivityCoreset
from ._sparsevi import SparseVICoreset
from ._streaming import StreamingCoreset
from ._subset import SparseWeightedSubset, WeightedSubset
from ._uniform import UniformCoreset

__all__ = ["BaseCoreset", "FrankWolfeCoreset", "GIGACoreset", "QuasiNewtonCoreset",
           "SensitivityCoreset", "SparseVICoreset", "SparseWeightedSubset", "StreamingCoreset",
           "UniformCoreset", "WeightedSubset"]
