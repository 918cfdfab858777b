"""Posterior objects returned by the inference functions and stored as ``posterior_``."""

from typing import Any

import numpy as np
from scipy import linalg, stats
from sklearn.utils import check_random_state

from ._linalg import (cholesky_in_place, cholesky_logdet, gaussian_kl_cholesky,
                      inverse_from_cholesky, mirror_lower, stable_cholesky)
from ._numbers import is_number
from ._typing import ArrayInput, FloatArray, RandomStateLike


class _Moments:
    """What both posterior kinds share: precision, marginal std and the Gaussian KL, all
    from ``mean`` and the Cholesky factor of ``cov``."""

    mean: FloatArray
    cov: FloatArray
    cov_cholesky: FloatArray
    _precision: FloatArray | None

    @property
    def precision(self) -> FloatArray:
        """Inverse covariance ``(p, p)``."""
        if self._precision is None:
            self._precision = linalg.cho_solve((self.cov_cholesky, True), np.eye(len(self.mean)))
        return self._precision

    @property
    def std(self) -> FloatArray:
        """Marginal posterior standard deviations ``(p,)``."""
        return np.sqrt(np.diag(self.cov))

    def kl(self, other: Any) -> float:
        """Return ``KL(self || other)`` between (moment-matched) Gaussians.

        Parameters
        ----------
        other : GaussianPosterior or SamplePosterior
            The posterior the divergence is measured to, over the same parameters.

        Returns
        -------
        kl : float
            The divergence, in nats.
        """
        return gaussian_kl_cholesky(self.mean, self.cov_cholesky, other.mean,
                                    other.cov_cholesky)


def _covariance(precision: FloatArray) -> FloatArray:
    """``precision^-1``, exactly symmetric, from the precision's Cholesky factor in place
    (LAPACK potri: a third of the flops of solving for the identity, and no second
    ``p x p`` array)."""
    return inverse_from_cholesky(stable_cholesky(precision))


def _inverse_cholesky(precision: FloatArray) -> FloatArray:
    """The lower Cholesky factor of ``precision^-1`` (:func:`_cholesky_of_inverse` of the
    precision's factor)."""
    return _cholesky_of_inverse(stable_cholesky(precision))


def _cholesky_of_inverse(chol: FloatArray) -> FloatArray:
    """The lower Cholesky factor of ``(L L^T)^-1`` for a lower Cholesky factor ``L``,
    computed in its place: the inverse by LAPACK potri, then factored in place
    (:func:`cholesky_in_place`, Fortran-ordered and exactly symmetric: the factor
    :func:`stable_cholesky` gives, without its copy; with jitter when the inverse is
    singular to rounding)."""
    return cholesky_in_place(inverse_from_cholesky(chol), symmetric=True)


def _product_of_cholesky(chol: FloatArray) -> FloatArray:
    """``L L^T`` for a lower triangular ``L``, exactly symmetric (BLAS syrk, one triangle
    mirrored onto the other in place)."""
    product = linalg.blas.dsyrk(1.0, chol)  # the upper triangle, Fortran-ordered
    mirror_lower(product.T)  # its transpose's lower triangle is that upper one
    return product


def check_level(level: float) -> float:
    """The credibility ``level`` as a float in (0, 1); ValueError otherwise."""
    if not is_number(level) or not 0.0 < level < 1.0:
        raise ValueError(f"level must be a number strictly between 0 and 1 (e.g. 0.95 for "
                         f"95% credible intervals), got {level!r}.")
    return float(level)


def _as_generator(
        random_state: RandomStateLike | np.random.Generator,
) -> np.random.RandomState | np.random.Generator:
    """A :class:`numpy.random.Generator` as is, else :func:`check_random_state`'s result."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return check_random_state(random_state)


class GaussianPosterior(_Moments):
    """Multivariate normal posterior ``N(mean, cov)`` over ``theta = [coef..., intercept]``.

    Give either ``cov`` or ``precision``; the other is derived through a Cholesky
    factorisation, never an explicit inverse of an unfactored matrix.

    Parameters
    ----------
    mean : array-like of shape (p,)
        Posterior mean.
    cov : array-like of shape (p, p), default=None
        Posterior covariance.
    precision : array-like of shape (p, p), default=None
        Posterior precision (inverse covariance), e.g. the negative Hessian of the log
        posterior at the mode for a Laplace approximation.

    Attributes
    ----------
    mean : ndarray of shape (p,)
    cov : ndarray of shape (p, p)
    cov_cholesky : ndarray of shape (p, p)
        Lower Cholesky factor ``L`` with ``cov = L @ L.T``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import GaussianPosterior
    >>> post = GaussianPosterior(np.zeros(2), precision=np.diag([4.0, 1.0]))
    >>> post.std
    array([0.5, 1. ])
    >>> post.sample(3, random_state=0).shape
    (3, 2)
    >>> float(post.kl(post))
    0.0
    """

    def __init__(self, mean: ArrayInput, cov: ArrayInput | None = None, *,
                 precision: ArrayInput | None = None) -> None:
        if (cov is None) == (precision is None):
            raise ValueError("Give exactly one of cov and precision.")
        self.mean = np.asarray(mean, dtype=float)
        self._cov: FloatArray | None
        if cov is None:
            precision = np.asarray(precision, dtype=float)
            # cov is formed again only when read (at rest a p x p array fewer: 32 MB at
            # p = 2000); its Cholesky factor is computed in its place
            self._precision = precision
            self._cov = None
            self.cov_cholesky = _inverse_cholesky(precision)
        else:
            cov = np.asarray(cov, dtype=float)
            self._cov = 0.5 * (cov + cov.T)
            self._precision = None
            self.cov_cholesky = stable_cholesky(self._cov)

    @classmethod
    def from_precision_cholesky(cls, mean: ArrayInput,
                                precision_cholesky: FloatArray) -> "GaussianPosterior":
        """Return ``N(mean, (R R^T)^-1)`` from the lower Cholesky factor ``R`` of the
        precision, which is overwritten.

        The covariance's Cholesky factor is computed in ``R``'s memory, and the posterior
        holds that one ``p x p`` array: ``cov`` and ``precision`` are formed from it when
        read, ``std`` without forming either. A posterior from ``precision=H`` with
        ``R = cholesky(H)`` has the same ``cov_cholesky``, bit for bit, and hence the same
        draws, log densities and divergences.

        Parameters
        ----------
        mean : array-like of shape (p,)
            Posterior mean.
        precision_cholesky : ndarray of shape (p, p)
            Lower Cholesky factor of the precision, Fortran-ordered (as
            :func:`scipy.linalg.cholesky` returns the factor it computes in place of a
            C-ordered symmetric matrix's transpose); overwritten.

        Returns
        -------
        posterior : GaussianPosterior
        """
        return cls.from_cov_cholesky(mean, _cholesky_of_inverse(precision_cholesky))

    @classmethod
    def from_cov_cholesky(cls, mean: ArrayInput,
                          cov_cholesky: FloatArray) -> "GaussianPosterior":
        """Return ``N(mean, C C^T)`` holding the lower Cholesky factor ``C`` of the
        covariance itself (not a copy): :meth:`from_precision_cholesky` of a factor ``R``
        whose covariance factor is ``C`` (e.g. computed by the same LAPACK calls), without
        computing it again.

        Parameters
        ----------
        mean : array-like of shape (p,)
        cov_cholesky : ndarray of shape (p, p)
            Lower triangular, its upper triangle zero.

        Returns
        -------
        posterior : GaussianPosterior
        """
        posterior = cls.__new__(cls)
        posterior.mean = np.asarray(mean, dtype=float)
        posterior._precision = None
        posterior._cov = None
        posterior.cov_cholesky = cov_cholesky
        return posterior

    @property
    def cov(self) -> FloatArray:
        """Posterior covariance ``(p, p)``.

        For a posterior given by its precision, its inverse, computed when first read (from
        its Cholesky factor ``L`` alone: ``L L^T``).
        """
        if self._cov is None:
            self._cov = (_product_of_cholesky(self.cov_cholesky) if self._precision is None
                         else _covariance(self._precision))
        return self._cov

    @cov.setter
    def cov(self, value: FloatArray) -> None:
        self._cov = value

    @property
    def std(self) -> FloatArray:
        """Marginal posterior standard deviations ``(p,)``."""
        if self._cov is None and self._precision is None:
            # the covariance's diagonal from its factor: no p x p array formed
            return np.sqrt(np.einsum("ij,ij->i", self.cov_cholesky, self.cov_cholesky))
        return np.sqrt(np.diag(self.cov))

    def sample(self, n_samples: int = 1,
               random_state: RandomStateLike | np.random.Generator = None) -> FloatArray:
        """Draw ``n_samples`` parameter vectors from the Gaussian.

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws.
        random_state : int, RandomState instance, Generator or None, default=None
            Anything :func:`sklearn.utils.check_random_state` accepts, or a
            :class:`numpy.random.Generator`.

        Returns
        -------
        draws : ndarray of shape (n_samples, p)
        """
        rng = _as_generator(random_state)
        z = rng.standard_normal((n_samples, len(self.mean)))
        return self.mean + z @ self.cov_cholesky.T

    def credible_interval(self, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
        """Equal-tailed marginal credible intervals: ``mean -/+ z std``.

        ``z`` is the standard normal quantile at ``(1 + level) / 2`` (1.96 for 0.95).

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside each interval, in (0, 1).

        Returns
        -------
        lower, upper : ndarray of shape (p,)
        """
        z = stats.norm.ppf(0.5 + 0.5 * check_level(level))
        return self.mean - z * self.std, self.mean + z * self.std

    def logpdf(self, theta: ArrayInput) -> FloatArray:
        """Log density at ``theta``.

        Parameters
        ----------
        theta : array-like of shape (p,) or (S, p)
            One parameter vector, or ``S`` of them in rows.

        Returns
        -------
        logpdf : float or ndarray of shape (S,)
        """
        single = np.ndim(theta) == 1
        theta = np.atleast_2d(theta)
        z = linalg.solve_triangular(self.cov_cholesky, (theta - self.mean).T, lower=True)
        p = len(self.mean)
        logdet = cholesky_logdet(self.cov_cholesky)
        out = -0.5 * (np.sum(z**2, axis=0) + logdet + p * np.log(2.0 * np.pi))
        return out[0] if single else out

    def __repr__(self) -> str:
        return f"GaussianPosterior(dim={len(self.mean)})"


class SamplePosterior(_Moments):
    """Posterior represented by draws of ``theta = [coef..., intercept]``, e.g. from MCMC.

    The draws are the posterior; ``mean`` and ``cov`` are their sample moments, and the
    Gaussian-only operations (:meth:`logpdf`, :meth:`kl`, ``cov_cholesky``) use the
    moment-matched Gaussian ``N(mean, cov)``, so code written for
    :class:`GaussianPosterior` (metrics, the estimators' Gaussian predictions) works
    unchanged. :meth:`sample` resamples the stored draws and so keeps any skewness or
    heavy tails they have.

    Parameters
    ----------
    samples : array-like of shape (n_samples, p)
        Draws from the posterior, at least two.

    Attributes
    ----------
    samples : ndarray of shape (n_samples, p)
        The stored draws.
    mean : ndarray of shape (p,)
        Sample mean of the draws.
    cov : ndarray of shape (p, p)
        Sample covariance of the draws (``n_samples - 1`` in the denominator).
    cov_cholesky : ndarray of shape (p, p)
        Lower Cholesky factor of ``cov`` (with the smallest diagonal jitter that makes it
        exist when the draws span fewer than ``p`` dimensions).

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import SamplePosterior
    >>> draws = np.random.default_rng(0).normal(size=(1000, 2)) + [1.0, -1.0]
    >>> post = SamplePosterior(draws)
    >>> np.round(post.mean, 1)
    array([ 1., -1.])
    >>> post.sample(5, random_state=0).shape
    (5, 2)
    """

    def __init__(self, samples: ArrayInput) -> None:
        samples = np.asarray(samples, dtype=float)
        if samples.ndim != 2 or samples.shape[0] < 2:
            raise ValueError("samples must be a 2-D array of shape (n_samples, p) with at "
                             f"least two draws, got shape {samples.shape}.")
        if not np.all(np.isfinite(samples)):
            raise ValueError("samples contains NaN or infinity.")
        self.samples = samples
        self.mean = samples.mean(axis=0)
        centred = samples - self.mean
        self.cov = (centred.T @ centred) / (len(samples) - 1)
        self.cov_cholesky = stable_cholesky(self.cov)
        self._precision = None

    @property
    def n_samples(self) -> int:
        """Number of stored draws."""
        return self.samples.shape[0]

    def gaussian(self) -> GaussianPosterior:
        """Return the moment-matched Gaussian ``N(mean, cov)``.

        Returns
        -------
        posterior : GaussianPosterior
        """
        return GaussianPosterior(self.mean, self.cov)

    def sample(self, n_samples: int = 1,
               random_state: RandomStateLike | np.random.Generator = None) -> FloatArray:
        """Resample ``n_samples`` of the stored draws uniformly with replacement.

        Resampling, rather than drawing from the moment-matched Gaussian, keeps the shape of
        the posterior the draws represent (skewness, tails, bounded support); it can only
        return values among the stored draws.

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws.
        random_state : int, RandomState instance, Generator or None, default=None
            Anything :func:`sklearn.utils.check_random_state` accepts, or a
            :class:`numpy.random.Generator`.

        Returns
        -------
        draws : ndarray of shape (n_samples, p)
        """
        rng = _as_generator(random_state)
        return self.samples[rng.choice(self.n_samples, size=n_samples)]

    def credible_interval(self, level: float = 0.95) -> tuple[FloatArray, FloatArray]:
        """Equal-tailed marginal credible intervals: empirical quantiles of the draws.

        The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of each parameter's draws
        (linear interpolation), so skewed posteriors get asymmetric intervals.

        Parameters
        ----------
        level : float, default=0.95
            Posterior probability inside each interval, in (0, 1).

        Returns
        -------
        lower, upper : ndarray of shape (p,)
        """
        tail = 0.5 * (1.0 - check_level(level))
        lower, upper = np.quantile(self.samples, [tail, 1.0 - tail], axis=0)
        return lower, upper

    def logpdf(self, theta: ArrayInput) -> FloatArray:
        """Log density of the moment-matched Gaussian at ``theta``.

        Draws define no density; this is the Gaussian with the draws' mean and covariance.

        Parameters
        ----------
        theta : array-like of shape (p,) or (S, p)
            One parameter vector, or ``S`` of them in rows.

        Returns
        -------
        logpdf : float or ndarray of shape (S,)
        """
        return self.gaussian().logpdf(theta)

    def __repr__(self) -> str:
        return f"SamplePosterior(n_samples={self.n_samples}, dim={len(self.mean)})"
