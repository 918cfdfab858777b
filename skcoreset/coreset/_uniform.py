"""Uniform subsampling: the baseline of every coreset paper."""

from .._backend import InMemoryRows
from ._base import BaseCoreset
from ._checks import check_both_classes
from ._docs import fill_sampling_doc
from .._typing import RandomStateLike


@fill_sampling_doc
class UniformCoreset(BaseCoreset):
    """Coreset of M rows drawn uniformly without replacement.

    Each selected row keeps its incoming weight, rescaled so that the coreset's total weight
    equals the data's: with unit weights every row gets weight ``N / M``.

    For the logistic model the draw is stratified by class (``stratify=True``): each class
    gets a share of the M rows proportional to its number of rows, at least one, and its
    rows are rescaled to the class's own total weight. A rare class is never dropped (an
    unstratified draw can miss it, and a one-class coreset cannot fit a classifier), and
    the estimate of the log-likelihood stays unbiased.

    On a dask array the draw is a distributed reservoir: every row gets a random key where
    its chunk lives and the rows of smallest keys (per class when stratified) are gathered,
    the same distribution as in memory.

    Parameters
    ----------
    M : int, default=100
        Number of rows drawn (all rows with positive weight when there are fewer).
    stratify : bool, default=True
        Draw within each class for the logistic model (ignored for other models).
        ``False`` gives the plain uniform baseline of the papers; it raises a
        ``ValueError`` when the draw misses a class.
    {common_params}
    Attributes
    ----------
    {common_attrs}
    See Also
    --------
    SensitivityCoreset : Importance sampling by sensitivity upper bounds.
    GIGACoreset : Deterministic Hilbert coreset.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import UniformCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> X_core, y_core, w_core = UniformCoreset(M=50, random_state=0).fit_coreset(X, y)
    >>> X_core.shape, round(float(w_core.sum()), 6)
    ((50, 3), 1000.0)
    >>> np.unique(y_core, return_counts=True)[1]  # stratified: classes in proportion
    array([28, 22])
    """

    _parameter_constraints = {**BaseCoreset._parameter_constraints, "stratify": ["boolean"]}

    def __init__(self, M: int = 100, *, stratify: bool = True, model: str = "auto",
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        super().__init__(M, model=model, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.stratify = stratify

    def _fit_rows(self, data, family, prior_prec, rng):
        part = data.uniform_sample(self.M, rng, stream=0, stratify=family.binary and self.stratify)
        if family.binary:
            check_both_classes(data, part, "use M >= 2 and keep stratify=True.")
        return part

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        part = self._fit_rows(InMemoryRows(X, y, sample_weight, offset), family, prior_prec,
                              rng)
        return part.indices, part.weights
