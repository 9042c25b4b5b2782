"""The ``lmr`` model kind: ``kind.py`` declares it."""
