"""The ``policy_value`` model kind: ``kind.py`` declares it."""
