"""Build the compiled engine core (Cython). Everything else is in pyproject.toml."""
from pathlib import Path

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # pragma: no cover - build requirements always bring Cython
    cythonize = None

HERE = Path(__file__).parent
# The engine core, and the readers and writers of the field's data formats that use it.
COMPILED = ("engines", "pipelines")
PYX = sorted(str(p.relative_to(HERE)) for folder in COMPILED for p in (HERE / folder).rglob("*.pyx"))


def extensions() -> list[Extension]:
    """One extension per .pyx file under engines/ and pipelines/, compiled with -O3."""
    if not PYX or cythonize is None:
        return []
    modules = [
        Extension(p[:-4].replace("/", "."), [p], extra_compile_args=["-O3", "-march=x86-64-v2"])
        for p in PYX
    ]
    return cythonize(modules, language_level=3, compiler_directives={
        "boundscheck": False, "wraparound": False, "cdivision": True, "initializedcheck": False,
    })


setup(ext_modules=extensions())
