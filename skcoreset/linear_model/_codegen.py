"""Write the estimators' ``__init__`` from the method table.

``python -m skcoreset.linear_model._codegen`` rewrites, in the modules of this package, the
lines between :data:`~._methods.GENERATED_BEGIN` and :data:`~._methods.GENERATED_END` of every
estimator class with the ``__init__`` that :func:`~._methods.render_init` gives for its
parameters; ``--check`` only lists the classes that are out of date (exit status 1). Type
checkers and IDEs read the written source; the tests run the check.
"""

import inspect
import sys
from pathlib import Path

from ._methods import (ESTIMATORS, GENERATED_BEGIN, GENERATED_END, estimator_params,
                       render_init)


def _generated_block(lines, cls):
    """``(start, stop)`` of the generated lines inside the body of ``cls`` in ``lines``."""
    first = next(number for number, line in enumerate(lines)
                 if line.startswith(f"class {cls.__name__}("))
    start = next((number for number in range(first, len(lines))
                  if lines[number] == GENERATED_BEGIN), None)
    next_class = next((number for number in range(first + 1, len(lines))
                       if lines[number].startswith("class ")), len(lines))
    if start is None or start > next_class:
        raise ValueError(f"{cls.__name__} has no generated __init__: add the lines\n"
                         f"{GENERATED_BEGIN}\n{GENERATED_END}\nto its body and run "
                         "python -m skcoreset.linear_model._codegen.")
    stop = lines.index(GENERATED_END, start)
    return start, stop + 1


def stale_estimators():
    """``{class: (path, rendered source)}`` of the estimators whose written ``__init__`` is
    not the one the method table gives."""
    stale = {}
    for cls in ESTIMATORS:
        path = Path(inspect.getsourcefile(cls))
        lines = path.read_text().split("\n")
        start, stop = _generated_block(lines, cls)
        rendered = render_init(estimator_params(cls))
        if "\n".join(lines[start:stop]) != rendered:
            stale[cls] = (path, rendered)
    return stale


def write(stale):
    """Write the rendered ``__init__`` of each stale class into its module."""
    for cls, (path, rendered) in stale.items():
        lines = path.read_text().split("\n")
        start, stop = _generated_block(lines, cls)
        lines[start:stop] = rendered.split("\n")
        path.write_text("\n".join(lines))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    stale = stale_estimators()
    names = ", ".join(cls.__name__ for cls in stale) or "none"
    if "--check" in argv:
        print(f"estimators whose __init__ is out of date: {names}")
        return 1 if stale else 0
    write(stale)
    print(f"rewrote the __init__ of: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
