"""Tables written by the import of the field's data formats (text, Lichess evaluations,
binpack, Parquet): how far into each file the committed rows reach, so a killed import
resumes there."""
import pyarrow as pa

from warehouse.tables import NOW, Table

INGEST_PROGRESS = Table(
    name="ingest_progress",
    doc="One row per committed batch of an import: the point in the (decompressed) file up to "
        "which every position, label and error is stored, and the counts so far. A file's "
        "sources row, written last, ends it; a killed import resumes after its last row.",
    columns=[
        ("source_id", pa.string(), "sources.source_id of the file being imported"),
        ("byte_offset", pa.int64(), "decompressed bytes read up to a record boundary"),
        ("line", pa.int64(), "text formats: lines read so far (0 for binpack)"),
        ("records", pa.int64(), "records read so far, bad ones included"),
        ("label_rows", pa.int64(), "label rows offered to the labels table so far"),
        ("truncated", pa.bool_(), "the stream stopped early (a truncated error) by this batch"),
        ("committed_at", NOW, "when the batch was committed"),
    ],
    key=("source_id", "byte_offset"),
)

TABLES = [INGEST_PROGRESS]
