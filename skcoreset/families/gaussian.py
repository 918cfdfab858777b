"""Gaussian likelihood with identity link and known noise scale."""

import numpy as np
from sklearn.utils import check_random_state

from .._numbers import check_positive_number
from ._base import Family, as_column
from ._links import IdentityLink
from .._typing import FloatArray, RandomStateLike


class GaussianFamily(Family):
    """Gaussian likelihood with identity link and known noise scale.

    ``log p(y | eta) = -(y - eta)^2 / (2 noise^2) - log(2 pi noise^2) / 2``. Targets are
    finite real values.

    Parameters
    ----------
    noise_scale : float, default=1.0
        Standard deviation of the observation noise.
    n_quadrature : int, default=32
        Unused (every expectation has a closed form); kept for a uniform signature.
    """

    name = "gaussian"

    def __init__(self, noise_scale: float = 1.0, n_quadrature: int = 32) -> None:
        super().__init__(IdentityLink(), n_quadrature=n_quadrature)
        self.noise_scale = check_positive_number("noise_scale", noise_scale)

    def _params(self):
        return {"noise_scale": self.noise_scale, **super()._params()}

    @property
    def _precision(self):
        return 1.0 / self.noise_scale**2

    def _log_norm(self):
        return -0.5 * np.log(2.0 * np.pi * self.noise_scale**2)

    def loglik(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``-(y - eta)^2 / (2 noise^2) - log(2 pi noise^2) / 2``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Real targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors (the means).

        Returns
        -------
        loglik : ndarray of the shape of ``eta``
        """
        resid = as_column(y, eta) - eta
        return -0.5 * self._precision * resid**2 + self._log_norm()

    def d1(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``(y - eta) / noise^2``.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Real targets.
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d1 : ndarray of the shape of ``eta``
        """
        return self._precision * (as_column(y, eta) - eta)

    def d2(self, y: FloatArray, eta: FloatArray) -> FloatArray:
        """``-1 / noise^2`` everywhere.

        Parameters
        ----------
        y : ndarray of shape (n,)
            Real targets (unused).
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.

        Returns
        -------
        d2 : ndarray of the shape of ``eta``
        """
        return np.full(np.shape(eta), -self._precision)

    def loglik_in_place(self, y: FloatArray, eta: FloatArray,
                        scratch: FloatArray) -> None:
        """In place: ``eta <- -(y - eta)^2 / (2 noise^2)`` (the normaliser dropped).

        Parameters
        ----------
        y : ndarray of shape (n,)
            Real targets.
        eta : ndarray of shape (n, S)
            Linear predictors; overwritten.
        scratch : ndarray of shape (2, n, S)
            Unused.
        """
        np.subtract(eta, y[:, None], out=eta)
        np.square(eta, out=eta)
        np.multiply(eta, -0.5 * self._precision, out=eta)

    def predictive_variance(self, mean: FloatArray, var: FloatArray) -> FloatArray:
        """``noise_scale^2 + Var[eta]``.

        Parameters
        ----------
        mean, var : ndarray of shape (n,)
            Posterior mean and variance of the mean of y.

        Returns
        -------
        variance : ndarray of shape (n,)
        """
        return self.noise_scale**2 + var

    def sample(self, eta: FloatArray, random_state: RandomStateLike = None) -> FloatArray:
        """Gaussian draws of targets given linear predictors.

        Parameters
        ----------
        eta : ndarray of shape (n,) or (n, S)
            Linear predictors.
        random_state : int, RandomState instance or None, default=None
            Seed of the draws.

        Returns
        -------
        y : ndarray of the shape of ``eta``
        """
        rng = check_random_state(random_state)
        return np.asarray(eta, dtype=float) + self.noise_scale * rng.standard_normal(
            np.shape(eta))

    def expected_loglik(self, y: FloatArray, m: FloatArray,
                        v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``E[log p(y | eta)]`` over ``eta ~ N(m, v)`` in closed form,
        ``-((y - m)^2 + v) / (2 noise^2) - log(2 pi noise^2) / 2``, and its gradients.

        Parameters
        ----------
        y, m, v : ndarray of shape (n,)
            Targets, means and variances of the Gaussian linear predictors.

        Returns
        -------
        value, grad_m, grad_v : ndarray of shape (n,)
        """
        y = np.asarray(y, dtype=float)
        m = np.asarray(m, dtype=float)
        v = np.asarray(v, dtype=float)
        value = -0.5 * self._precision * ((y - m) ** 2 + v) + self._log_norm()
        return value, self._precision * (y - m), np.full(m.shape, -0.5 * self._precision)

    def expected_mean(self, m: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``(m, v)``: the mean is the linear predictor itself.

        Parameters
        ----------
        m, v : ndarray of shape (n,)
            Means and variances of the Gaussian linear predictors.

        Returns
        -------
        mean, var : ndarray of shape (n,)
        """
        return np.asarray(m, dtype=float), np.asarray(v, dtype=float)
