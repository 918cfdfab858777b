"""What every display shares: matplotlib imported lazily, the axes to draw on, the fitted
estimator behind a pipeline."""

from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted


def axes(ax):
    """``(figure, axes)``: those of ``ax``, or a new figure's when ``ax`` is None."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # the optional ``plot`` extra
        raise ImportError('The skcoreset displays need matplotlib: pip install '
                          '"skcoreset[plot]" (or pip install matplotlib).') from exc
    if ax is None:
        figure, ax = plt.subplots()
        return figure, ax
    if not hasattr(ax, "figure") or not hasattr(ax, "plot"):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}.")
    return ax.figure, ax


def final_estimator(estimator, name="estimator"):
    """The fitted estimator that holds the posterior: the last step of a pipeline, else the
    estimator itself (NotFittedError when it is not fitted)."""
    final = estimator[-1] if isinstance(estimator, Pipeline) else estimator
    check_is_fitted(final)
    if not hasattr(final, "posterior_"):
        raise TypeError(f"{name} must be a fitted skcoreset Bayesian GLM estimator (or a "
                        f"pipeline ending in one), with a posterior_; got "
                        f"{type(final).__name__}.")
    return final


def transform_for_final(estimator, X):
    """X as the final step of a pipeline sees it at prediction time (a coreset step passes
    the rows through); X itself for an estimator."""
    if isinstance(estimator, Pipeline) and len(estimator) > 1:
        return estimator[:-1].transform(X)
    return X
