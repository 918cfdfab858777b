"""Displays in scikit-learn's style (``RocCurveDisplay``, ``CalibrationDisplay``): pictures
of a coreset's accuracy, of fitted posteriors and of predictive calibration.

Each display is built by a class method (``from_coreset``, ``from_estimator``,
``from_estimators`` or ``from_predictions``) that computes the values and draws them, and
keeps the values and the matplotlib objects as attributes (``ax_``, ``figure_`` and the
artists), so that ``plot(ax=...)`` can draw them again elsewhere without recomputing.

* :class:`CoresetAccuracyDisplay`: the KL divergence of the coreset posterior from the full
  posterior, in nats, against the number of coreset rows;
* :class:`PosteriorComparisonDisplay`: posterior means and credible intervals of the
  coefficients of several fits, side by side (a coreset fit against the all-rows fit);
* :class:`PredictiveCalibrationDisplay`: predicted probability against observed frequency
  of a binary classifier, with the posterior predictive band of that frequency;
* :class:`MCMCDiagnosticsDisplay`: the chains of an MCMC fit, a trace and a rank plot per
  parameter, with its R-hat and effective sample size.

matplotlib (the ``plot`` extra, ``pip install "skcoreset[plot]"``) is imported when a
display draws, not when this module is imported.
"""

from ._calibration import PredictiveCalibrationDisplay
from ._coreset_accuracy import CoresetAccuracyDisplay
from ._mcmc_diagnostics import MCMCDiagnosticsDisplay
from ._posterior_comparison import PosteriorComparisonDisplay

__all__ = ["CoresetAccuracyDisplay", "MCMCDiagnosticsDisplay", "PosteriorComparisonDisplay",
           "PredictiveCalibrationDisplay"]
