"""numpy, imported when first needed and on one thread (the vectors of `store.backends.vectors`
and the model of `store.index.embedding` both read it)."""

from __future__ import annotations


def import_numpy():
    """numpy, with OpenBLAS on one thread unless told otherwise: a prime does one small
    matrix-vector product per block, and starting OpenBLAS's threads costs more CPU than it
    (30 ms at import on a 2-core machine)."""
    import os
    import sys

    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import numpy

    return numpy
