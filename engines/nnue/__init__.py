"""NNUE for the alpha-beta engine (paper 002, with Stockfish 12's HalfKP and quantisation).

``features`` extracts HalfKP indices in C (also the batch API of the training pipeline),
``reference`` holds the python-chess/numpy yardsticks of the compiled code. ``DEFAULT_NET`` is
the net ``alphabeta:eval=nnue`` plays without ``--nnue`` or ``--model`` (issue 38; which data
and command made it: docs/experiments/nnue.md).
"""
from pathlib import Path

#: Not "default.npz": python-chess reads a UCI option's default up to the word "default".
DEFAULT_NET = Path(__file__).resolve().parent / "nets" / "psq768.npz"
