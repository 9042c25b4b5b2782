"""Build the compiled engine core (Cython). Everything else is in pyproject.toml."""
import os
import re
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - build requirements always bring Cython
    cythonize = None

HERE = Path(__file__).parent
# The engine core, and the compiled readers and writers of the field's data formats and of
# PGN (pipelines/ingest/_pgn.pyx) that use it.
COMPILED = ("engines", "pipelines", "warehouse")
#: A C header a .pyx includes: ``cdef extern from "kernels.h"``.
EXTERN_HEADER = re.compile(r'^cdef extern from "([\w.]+\.h)"', re.MULTILINE)
PYX = sorted(str(p.relative_to(HERE)) for folder in COMPILED for p in (HERE / folder).rglob("*.pyx"))


def extension(pyx: str) -> Extension:
    """The module of one .pyx, compiled with -O3; the C headers it includes from its folder
    (``cdef extern from "kernels.h"``) are on its include path and rebuild it when they
    change; a header that includes ``<omp.h>`` (the NNUE trainer's kernels) builds its module
    with OpenMP."""
    folder = Path(pyx).parent
    names = EXTERN_HEADER.findall((HERE / pyx).read_text())
    headers = sorted(str(folder / name) for name in names if (HERE / folder / name).is_file())
    openmp = ["-fopenmp"] if any("#include <omp.h>" in (HERE / h).read_text()
                                 for h in headers) else []
    return Extension(pyx[:-4].replace("/", "."), [pyx], include_dirs=[str(folder)],
                     depends=headers, extra_compile_args=["-O3", "-march=x86-64-v2", *openmp],
                     extra_link_args=openmp)


def extensions() -> list[Extension]:
    """One extension per .pyx file under engines/ and pipelines/ (translated to C by
    Cython on every core)."""
    if not PYX or cythonize is None:
        return []
    modules = [extension(p) for p in PYX]
    return cythonize(modules, language_level=3, nthreads=cores(), compiler_directives={
        "boundscheck": False, "wraparound": False, "cdivision": True, "initializedcheck": False,
    })


def cores() -> int:
    """The cores this process may use (``CHESSLAB_BUILD_JOBS`` overrides)."""
    return int(os.environ.get("CHESSLAB_BUILD_JOBS") or len(os.sched_getaffinity(0)) or 1)


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the extensions on every core at once (``--parallel`` by
    default; they were compiled one after another, in an install that took 42 minutes on a
    busy 2-core machine)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = cores()


setup(ext_modules=extensions(), cmdclass={"build_ext": ParallelBuildExt})
