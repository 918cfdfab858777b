"""Temporaries of the tasks that run on dask workers, from memory the allocator keeps.

``distributed`` starts its worker processes with ``MALLOC_TRIM_THRESHOLD_=65536``, so that
memory freed by tasks goes back to the system at once. Setting any of glibc's thresholds
by the environment fixes them all: every allocation above 128 KiB is then a mapping of its
own, whose pages are faulted in (and zeroed) on first touch and unmapped when it is freed,
and a pass over a chunk makes hundreds of them (linear predictors, blocks of the design,
the family's terms). On a 2-worker cluster of a busy 2-core machine this made a gradient's
pass over 2e6 rows cost four times the CPU time it costs with glibc's own thresholds.

:func:`reusing_memory` lifts the two thresholds while a task runs, so that its temporaries
reuse the pages of the heap, and gives the freed memory back when the last such task of
the process ends (``malloc_trim``): the memory is returned, as the setting asks, once per
task rather than once per temporary. Nothing changes in processes that did not set the
thresholds by the environment, or whose C library is not glibc.
"""

import ctypes
import ctypes.util
import os
import threading
from contextlib import contextmanager
from functools import cache

# mallopt's parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
# while a task runs: allocations up to 32 MiB (glibc's largest dynamic threshold) from the
# heap, which keeps up to 256 MiB of freed memory at its top
_TASK_MMAP_THRESHOLD = 2**25
_TASK_TRIM_THRESHOLD = 2**28
# glibc's mmap threshold, which setting a threshold by the environment fixes
_FIXED_MMAP_THRESHOLD = 2**17

_lock = threading.Lock()
_running = 0  # tasks of this process inside reusing_memory


@cache
def _fixed_thresholds():
    """``(libc, trim threshold)`` when this process's glibc thresholds were fixed by
    ``MALLOC_TRIM_THRESHOLD_`` alone (as ``distributed`` does), else None."""
    trim = os.environ.get("MALLOC_TRIM_THRESHOLD_")
    others = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_")
    if trim is None or any(name in os.environ for name in others):
        return None
    try:
        trim = int(trim)
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # glibc's; other C libraries lack them
    except (ValueError, OSError, AttributeError):
        return None
    return libc, trim


@contextmanager
def reusing_memory():
    """Temporaries from the heap while the block runs, the freed memory given back when the
    last block running in this process ends (see the module's docstring)."""
    global _running
    fixed = _fixed_thresholds()
    if fixed is None:
        yield
        return
    libc, trim = fixed
    with _lock:
        _running += 1
        if _running == 1:
            libc.mallopt(_M_MMAP_THRESHOLD, _TASK_MMAP_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, _TASK_TRIM_THRESHOLD)
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                libc.mallopt(_M_TRIM_THRESHOLD, trim)
                libc.mallopt(_M_MMAP_THRESHOLD, _FIXED_MMAP_THRESHOLD)
                libc.malloc_trim(0)
