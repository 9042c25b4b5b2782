"""The stages of ``chesslab make-net`` runs (issue 47): an append-only event log, one row per
stage started or finished, so a run's data, training, evaluation and promotion can be
followed and joined back (a stage's payload names the shard files, the model, the
tournament)."""
import pyarrow as pa

from warehouse.tables import NOW, Table

NET_RUN_EVENTS = Table(
    name="net_run_events",
    doc="Append-only stages of chesslab make-net runs: datagen rounds, ingest, training, "
        "evaluation, each started and finished with a JSON payload (positions, seconds, "
        "files, model, tournament); the latest event of a run is where it stands.",
    columns=[
        ("event_id", pa.string(), "the event's own id: uuid4 hex"),
        ("run_id", pa.string(), "the run: make-net- and a hash of its config"),
        ("stage", pa.string(), "datagen, ingest, train, evaluate or run"),
        ("event", pa.string(), "started, progress, finished or failed"),
        ("seconds", pa.float64(), "seconds the stage took (finished), else null"),
        ("payload", pa.string(), "what the event carries as a JSON object"),
        ("recorded_at", NOW, "when the event happened"),
    ],
    key=("event_id",),
)

TABLES = [NET_RUN_EVENTS]
