"""The ``nnue`` model kind: ``kind.py`` declares it."""
