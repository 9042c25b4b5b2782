"""The warehouse: Delta Lake tables under ``<home>/lake`` are the truth, DuckDB views query them.

>>> from warehouse import Lake, connect
"""
from warehouse.catalog import connect
from warehouse.errors import WarehouseError
from warehouse.lake import Lake, resolve_home

__all__ = ["Lake", "WarehouseError", "connect", "resolve_home"]
