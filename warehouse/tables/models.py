"""Tables of the model registry, written by ``pipelines.train``: models, the data each was
trained on, per-epoch metrics and an append-only event log (trained, exported, deployed, ...).

A model is named ``KIND@VERSION`` (``nnue@3``); that name is its ``model_id``.
"""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

MODELS = Table(
    name="models",
    doc="One row per trained model version, written when its training finished.",
    schema=pa.schema([
        ("model_id", pa.string()),         # KIND@VERSION, e.g. nnue@3
        ("kind", pa.string()),             # nnue, volatility, lmr, policy_value
        ("name", pa.string()),             # human label, e.g. nnue-small
        ("version", pa.int32()),           # 1, 2, ... per kind
        ("config", pa.string()),           # JSON of the training config
        ("artifact_path", pa.string()),    # the exported file (e.g. nnue.npz)
        ("artifact_sha256", pa.string()),
        ("created_at", NOW),
    ]),
    key=("model_id",),
)

MODEL_DATASETS = Table(
    name="model_datasets",
    doc="What a model was trained on: the query, its parameters, label engine and depths, the "
        "lake table versions read, split sizes and a content hash of the position keys.",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("view", pa.string()),             # the view the query reads, e.g. nnue_examples
        ("query", pa.string()),            # the named query, e.g. nnue_dataset
        ("parameters", pa.string()),       # JSON of the query parameters
        ("label_engine_id", pa.string()),
        ("label_depths", pa.list_(pa.int32())),
        ("table_versions", pa.string()),   # JSON {table: version or null}
        ("train_rows", pa.int64()),
        ("validation_rows", pa.int64()),
        ("position_keys_hash", pa.string()),  # order-independent hash of the keys read, hex
        ("recorded_at", NOW),
    ]),
    key=("model_id",),
)

MODEL_METRICS = Table(
    name="model_metrics",
    doc="One row per model and finished epoch, written as training goes (curves of a run in "
        "progress). A resumed run rewrites at most the epoch it was killed in.",
    schema=pa.schema([
        ("model_id", pa.string()),
        ("epoch", pa.int32()),             # 0-based
        ("step", pa.int64()),              # optimiser steps so far
        ("train_loss", pa.float64()),      # mean over the epoch
        ("val_loss", pa.float64()),
        ("positions_per_s", pa.float64()), # training examples per second over the epoch
        ("learning_rate", pa.float64()),
        ("extra", pa.string()),            # JSON of kind-specific metrics (accuracy, AUC, ...)
        ("recorded_at", NOW),
    ]),
    key=("model_id", "epoch"),
)

MODEL_EVENTS = Table(
    name="model_events",
    doc="Append-only life of a model: started, trained, exported, deployed, evaluated, "
        "promoted, retired, each with a JSON payload. The latest event is its status.",
    schema=pa.schema([
        ("event_id", pa.string()),         # uuid4 hex
        ("model_id", pa.string()),
        ("event", pa.string()),
        ("payload", pa.string()),          # JSON object
        ("recorded_at", NOW),
    ]),
    key=("event_id",),
)

TABLES = [MODELS, MODEL_DATASETS, MODEL_METRICS, MODEL_EVENTS]
