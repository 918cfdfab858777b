"""Order of the examples in the gallery: from the quick start to scaling out.

Referenced by its fully qualified name in ``sphinx_gallery_conf["within_subsection_order"]``
(a string, so the Sphinx configuration stays picklable). Examples not listed come last, by
file name.
"""

ORDER = [
    "plot_quickstart.py",
    "plot_coreset_2d.py",
    "plot_kl_vs_coreset_size.py",
    "plot_sensitivity_rare_features.py",
    "plot_vector_solvers.py",
    "plot_cv_coreset_size.py",
    "plot_uncertainty_map.py",
    "plot_poisson_intervals.py",
    "plot_displays.py",
    "plot_sparse_one_hot.py",
    "plot_streaming_pass_glm.py",
    "plot_streaming_coreset.py",
    "plot_dask_laplace.py",
    "plot_dask_pass_glm.py",
]


class ExampleOrder:
    """Sort key of sphinx-gallery's ``within_subsection_order``."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        return (ORDER.index(filename) if filename in ORDER else len(ORDER), filename)

    def __repr__(self):
        return f"<{type(self).__name__}>"
