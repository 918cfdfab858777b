"""The potentials evaluator shared by the coreset constructions and the exact KL."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from skcoreset._inference.potentials import PotentialEvaluator
from skcoreset.families import LogisticFamily


def test_evaluator_called_from_threads_at_once_gives_each_its_own_potentials():
    # dask's threaded scheduler calls one evaluator on several chunks at once: shared
    # buffers let one chunk's potentials overwrite another's
    rng = np.random.default_rng(0)
    blocks = [rng.normal(size=(3000, 4)) for _ in range(8)]
    ys = [np.sign(rng.normal(size=3000)) for _ in range(8)]
    thetas = rng.normal(size=(50, 4))
    evaluator = PotentialEvaluator(LogisticFamily(), False, len(thetas))
    expected = [PotentialEvaluator(LogisticFamily(), False, len(thetas))(X, y, thetas).sum(0)
                for X, y in zip(blocks, ys)]

    def run(i):
        return [evaluator(blocks[i], ys[i], thetas).sum(0) for _ in range(20)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(8)))
    for got, want in zip(results, expected):
        for g in got:
            np.testing.assert_allclose(g, want, rtol=1e-12)


def test_evaluator_pickles_without_its_buffers():
    evaluator = PotentialEvaluator(LogisticFamily(), True, 3)
    X, y, thetas = np.ones((5, 2)), np.ones(5), np.zeros((3, 3))
    before = evaluator(X, y, thetas).copy()
    copy = pickle.loads(pickle.dumps(evaluator))
    np.testing.assert_array_equal(copy(X, y, thetas), before)
