"""Export: a model version's training data, or any ``nnue_examples`` selection, written in the
formats the field's other trainers read (bullet/marlinflow text, Stockfish binpack for
nnue-pytorch, EPD with ``ce``/``bm``/``acd``/``c9``, Parquet), so the same data can be trained
elsewhere and compared. ``chesslab ingest`` reads each of them back.

>>> from pipelines.export import ExportConfig, export_dataset
"""
from pipelines.export.config import ExportConfig, ExportError
from pipelines.export.run import ExportSummary, export_dataset

__all__ = ["ExportConfig", "ExportError", "ExportSummary", "export_dataset"]
