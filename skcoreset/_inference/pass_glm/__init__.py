"""PASS-GLM: polynomial approximate sufficient statistics (Huggins, Adams & Broderick, 2017).

A GLM log-likelihood ``sum_n w_n [y_n s_n - f(s_n)]`` in the linear predictor
``s_n = a_n . theta`` has no finite sufficient statistics, but with a degree-``M``
polynomial ``f_M(s) = sum_m b_m s^m`` in place of ``f`` it has: expanding ``(a_n . theta)^m``
shows that the approximate log-likelihood depends on the data only through the weighted
moment sums ``t_k = sum_n w_n a_n^k`` over the multi-indices ``|k| <= M`` and the exact linear
term ``sum_n w_n y_n a_n`` (Algorithm 1 of the paper, lines 3-7). These sums take one pass
over the data, add up over chunks (streams, ``partial_fit``, dask map-reduce) and afterwards
the posterior costs nothing that depends on ``n``.

* ``degree=2`` (PASS-LR2, the paper's §5 setting): the approximate log-likelihood is quadratic
  in ``theta``, so under the Gaussian prior the posterior is Gaussian in closed form from
  ``sum_n w_n a_n``, ``sum_n w_n y_n a_n`` and ``sum_n w_n a_n a_n^T``.
* ``degree > 2`` (small ``d`` only: there are ``C(p + M, M)`` monomials): MAP of the polynomial
  surrogate by Newton's method and a Laplace approximation at its mode.

Supported models, with ``a_n = [x_n, 1]`` (or ``x_n``):

* logistic, ``y_n in {0, 1}``: ``f(s) = log(1 + e^s)`` (softplus). On an interval symmetric
  about 0 this is the paper's approximation of ``phi(s) = -log(1 + e^-s)`` at the margins
  ``y_n s_n`` with labels in ``{-1, +1}``, because ``softplus(s) - s/2`` is even;
* Poisson with log link: ``f(s) = e^s`` (paper Corollary 4.5); the constant ``-log y!`` is
  kept exactly.

The polynomial
--------------
``radius=R`` (a number): the truncated Chebyshev series of ``f`` on ``[-R, R]``, as in the
paper. Valid degrees keep the surrogate bounded above (otherwise the "posterior" is
improper): logistic ``M = 2 + 4k`` (paper §3: the odd Chebyshev coefficients beyond the first
vanish, and the coefficient of ``s^(4k)`` has the wrong sign), Poisson ``M`` even (the
Chebyshev coefficients of ``e^s`` are ``2 I_m(R) > 0``).

The error does not shrink with ``n`` (Corollaries 4.1 and 4.4 of the paper) while the
posterior does, so a fixed interval is fine at small ``n`` and badly biased at large ``n`` or
when the linear predictors are not centred at 0: degree 2 on ``[-4, 4]`` has constant
curvature ``f''(0) ~ 0.16`` where a data set of rare positives (``s_n ~ -6``) has 0.0025.

``radius="auto"`` (the estimators' default): a *pilot* fit (the mode, to ``PILOT_TOL`` nats)
on at most ``PILOT_ROWS`` rows gives linear predictors ``s_n`` representative of the
posterior, and ``f_M'`` is the weighted least-squares fit of ``f'`` on them. The gradient of
the surrogate then matches the exact one where the data are; for Gaussian designs the
residual ``f' - f_M'`` is orthogonal to ``1`` and to ``s``, which by Stein's lemma makes the
surrogate's mode exact up to the pilot's error, and ``2 b_2`` is the average curvature
``E f''(s)``.

The pilot rows are a uniform sample of all rows (per class for the logistic model, so that
rare classes are represented), drawn in the same pass as the statistics: every row's key is a
hash of its number and the rows of smallest keys are kept (:class:`PilotSample`), so the
sample, and the polynomial, are the same in memory, over the chunks of a dask array and
over the blocks of a ``partial_fit`` stream. The statistics do not depend on the polynomial
(the moment sums ``t_k`` involve no coefficient), so it is chosen once the rows are
summarised: after the map-reduce over the chunks, after every block of a stream. The data
are read once.

Whatever the polynomial, :func:`pass_glm_posterior` measures its effect on held-out rows
(the sample's rows outside the pilot; :func:`mean_error_estimate`) and warns when the
posterior mean is estimated to be more than one posterior standard deviation off, or the
estimate's standard error cannot rule that out.

Modules: ``_chebyshev`` (the Chebyshev series), ``_surrogate`` (models, degree rules,
coefficients), ``_pilot`` (the pilot sample, the pilot fit and the polynomial fitted on it),
``_monomials`` (packed moment tensors), ``_statistics`` (:class:`PassGLMStatistics`),
``_dask`` (the map-reduce over dask chunks), ``_posterior`` (posterior and accuracy
estimate), ``_fit`` (:func:`pass_glm`, the inference method) and ``_stream``
(:class:`PassGLMStream`, what ``partial_fit`` carries from chunk to chunk).
"""

from ...exceptions import PassGLMAccuracyWarning
from ._chebyshev import chebyshev_coefficients
from ._dask import pass_glm_statistics_dask, summarise_chunks
from ._fit import pass_glm, posterior_from_sample
from ._monomials import n_monomials
from ._pilot import (PILOT_ROWS, PILOT_TOL, Pilot, PilotSample, WeightedRows,
                     fitted_coefficients, pilot_fit, start_statistics, surrogate_options)
from ._posterior import MEAN_ERROR_WARN_SD, mean_error_estimate, pass_glm_posterior
from ._statistics import MAX_MONOMIALS, PassGLMStatistics, pass_glm_statistics
from ._stream import PassGLMStream
from ._surrogate import MAX_DEGREE, check_pass_degree

__all__ = ["MAX_DEGREE", "MAX_MONOMIALS", "MEAN_ERROR_WARN_SD", "PILOT_ROWS", "PILOT_TOL",
           "PassGLMAccuracyWarning", "PassGLMStatistics", "PassGLMStream", "Pilot",
           "PilotSample", "WeightedRows", "chebyshev_coefficients", "check_pass_degree",
           "fitted_coefficients", "mean_error_estimate", "n_monomials", "pass_glm",
           "pass_glm_posterior", "pass_glm_statistics", "pass_glm_statistics_dask",
           "pilot_fit", "posterior_from_sample", "start_statistics", "summarise_chunks",
           "surrogate_options"]
