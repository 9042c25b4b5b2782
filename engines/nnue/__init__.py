"""NNUE for the alpha-beta engine (paper 002, with Stockfish 12's HalfKP and quantisation).

``features`` extracts HalfKP indices in C (also the batch API of the training pipeline),
``reference`` holds the python-chess/numpy yardsticks of the compiled code.
"""
