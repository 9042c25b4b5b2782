"""Type stub for the compiled warehouse/_fingerprint.pyx."""
import numpy as np

def string_prints(offsets: np.ndarray, data: np.ndarray) -> np.ndarray: ...
