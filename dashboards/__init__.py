"""Dashboards over the warehouse: each panel reads one named query from ``warehouse/sql``."""
