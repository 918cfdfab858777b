"""Bernoulli likelihood with probit link: binary labels encoded as ``y in {-1, +1}``."""

from ._links import ProbitLink
from .binary import BinaryFamily


class ProbitFamily(BinaryFamily):
    """Bernoulli likelihood with probit link; labels encoded as ``y in {-1, +1}``.

    ``P(y = +1 | eta) = Phi(eta)``, the standard normal distribution function, so
    ``log p(y | eta) = log Phi(y eta)`` (:class:`~skcoreset.families.ProbitLink`, stable in
    both tails). Targets are any two class labels, as for :class:`LogisticFamily`. The
    probit model's log-likelihood falls off quadratically for badly misclassified points,
    where the logistic one falls off linearly: it is less robust to outlying labels and
    gives sharper posteriors on well-separated data. Predictions integrate ``Phi`` over a
    Gaussian posterior in closed form, ``E[Phi(eta)] = Phi(m / sqrt(1 + v))``.

    Parameters
    ----------
    n_quadrature : int, default=32
        Gauss-Hermite points of the expected log-likelihood over narrow Gaussians.
    """

    name = "probit"
    pass_glm_mapping = "probit"

    def __init__(self, n_quadrature: int = 32) -> None:
        super().__init__(ProbitLink(), n_quadrature=n_quadrature)
