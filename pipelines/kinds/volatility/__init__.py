"""The ``volatility`` model kind: ``kind.py`` declares it."""
