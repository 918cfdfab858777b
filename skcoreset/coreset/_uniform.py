"""Uniform subsampling: the baseline of every coreset paper."""

from ._base import BaseCoreset, fill_coreset_doc
from ._sampling import uniform_subset


@fill_coreset_doc
class UniformCoreset(BaseCoreset):
    """Coreset of M rows drawn uniformly without replacement.

    Each selected row keeps its incoming weight, rescaled so that the coreset's total weight
    equals the data's: with unit weights every row gets weight ``N / M``.

    Parameters
    ----------
    M : int, default=100
        Number of rows drawn (all rows with positive weight when there are fewer).
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
    >>> X_core.shape, float(w_core.sum())
    ((50, 3), 1000.0)
    """

    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        return uniform_subset(self.M, sample_weight, rng)
