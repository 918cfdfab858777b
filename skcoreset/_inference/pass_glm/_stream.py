"""A PASS-GLM stream: what ``partial_fit`` carries from one chunk to the next."""

import copy

from ._fit import posterior_from_sample
from ._pilot import PilotSample, start_statistics


class PassGLMStream:
    """The statistics, pilot sample and pilot fit of the rows of a stream so far.

    Sums over rows, so chunks add up to what one pass over all rows gives; the polynomial
    (for ``radius="auto"``) is chosen again after every chunk from the pilot rows of all rows
    so far, the pilot fit started at the previous one (:func:`posterior_from_sample`).
    ``settings`` are the options the statistics were accumulated under (the estimator's
    ``(pass_degree, pass_radius, fit_intercept)``): a stream cannot go on under others.

    Parameters
    ----------
    statistics : PassGLMStatistics
    sample : PilotSample
    pilot : Pilot or None
        The pilot fit of the last posterior (None for a numeric radius or an empty stream).
    settings : tuple
    """

    def __init__(self, statistics, sample, pilot, settings):
        self.statistics = statistics
        self.sample = sample
        self.pilot = pilot
        self.settings = settings

    @classmethod
    def start(cls, family, n_features, *, degree, radius, fit_intercept, settings):
        """An empty stream of rows of ``n_features`` features."""
        statistics = start_statistics(family, n_features, degree=degree, radius=radius,
                                      fit_intercept=fit_intercept)
        return cls(statistics, PilotSample.empty(statistics.model, n_features), None,
                   settings)

    @classmethod
    def of_result(cls, result, settings):
        """The stream a PASS-GLM fit continues as (None for a result of another method)."""
        statistics = result.extra.get("statistics")
        if statistics is None:
            return None
        return cls(statistics, result.extra["pilot_sample"], result.extra.get("pilot"),
                   settings)

    def add(self, X, y, sample_weight, family, *, radius, prior_prec, tol, max_iter,
            verbose=0):
        """The posterior of the rows so far and ``X``; ``self`` is left as it was.

        Returns
        -------
        result : InferenceResult
            As :func:`posterior_from_sample` returns it.
        stream : PassGLMStream
            The stream with the chunk added (a chunk is added completely or not at all).
        """
        statistics = copy.deepcopy(self.statistics)
        offset = statistics.n_samples  # the number of the chunk's first row
        statistics.add(X, y, sample_weight)
        sample = self.sample.add(X, y, sample_weight, offset=offset)  # a new object
        result = posterior_from_sample(
            statistics, sample, family, radius=radius, prior_prec=prior_prec, tol=tol,
            max_iter=max_iter, verbose=verbose,
            pilot_theta=None if self.pilot is None else self.pilot.theta)
        return result, PassGLMStream.of_result(result, self.settings)
