"""Subcommand modules of the ``chesslab`` CLI: each defines ``register(subparsers)``."""
