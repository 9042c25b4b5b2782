"""Type stub for the NNUE trainer's compiled kernels (pipelines/kinds/nnue/_sparse.pyx), for
mypy."""
import numpy as np

BLOCK: int

def feature_sums(idx: np.ndarray, w: np.ndarray, pad: int, out: np.ndarray,
                 threads: int) -> None: ...
def feature_sums_backward(idx: np.ndarray, g: np.ndarray, pad: int, gw: np.ndarray,
                          threads: int) -> None: ...
def perspective_forward(idx: np.ndarray, w: np.ndarray, b: np.ndarray, w_out: np.ndarray,
                        bucket: np.ndarray, pad: int, screlu: bool, acc: np.ndarray,
                        y: np.ndarray, threads: int) -> None: ...
def perspective_backward(idx: np.ndarray, acc: np.ndarray, dy: np.ndarray, w_out: np.ndarray,
                         bucket: np.ndarray, pad: int, screlu: bool, gw: np.ndarray,
                         gb: np.ndarray, gw_out: np.ndarray, threads: int) -> None: ...
