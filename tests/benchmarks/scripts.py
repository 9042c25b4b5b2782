"""The scripts in ``benchmarks/`` (not a package), loaded by file path for their tests."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_script(script: str, module_name: str) -> ModuleType:
    """``benchmarks/<script>`` run as the module ``module_name``, registered in
    ``sys.modules`` first: its dataclasses (and pickles) look their module up by name."""
    spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
