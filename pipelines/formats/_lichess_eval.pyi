"""Type stub for the compiled pipelines/formats/_lichess_eval.pyx."""
import numpy as np

def scan_block(data: bytes, pv_moves: int) -> dict[str, np.ndarray]: ...
