"""Tables of the model registry, written by ``pipelines.train``: models, the data each was
trained on, per-epoch metrics and an append-only event log (trained, exported, deployed, ...).

A model is named ``KIND@VERSION`` (``nnue@3``); that name is its ``model_id``.
"""
import pyarrow as pa

from warehouse.tables import NOW, Table

MODELS = Table(
    name="models",
    doc="One row per trained model version, written when its training finished.",
    columns=[
        ("model_id", pa.string(), "KIND@VERSION, e.g. nnue@3"),
        ("kind", pa.string(), "nnue, volatility, lmr, policy_value"),
        ("name", pa.string(), "a human label of the run, e.g. nnue-small"),
        ("version", pa.int32(), "the version number within the kind: 1, 2, ..."),
        ("config", pa.string(), "the training config as JSON"),
        ("artifact_path", pa.string(), "the exported file (e.g. nnue.npz)"),
        ("artifact_sha256", pa.string(),
         "SHA-256 of the artifact, hex: checked before an engine loads it"),
        ("created_at", NOW, "when the model was registered (its training finished)"),
    ],
    key=("model_id",),
)

MODEL_DATASETS = Table(
    name="model_datasets",
    doc="What a model was trained on: the query, its parameters, label engine and depths, the "
        "lake table versions read, split sizes and a content hash of the position keys.",
    columns=[
        ("model_id", pa.string(), "models.model_id of the model trained on the data"),
        ("view", pa.string(), "the view the query reads, e.g. nnue_examples"),
        ("query", pa.string(), "the named query, e.g. nnue_dataset"),
        ("parameters", pa.string(), "the named query's parameters as JSON"),
        ("label_engine_id", pa.string(),
         "engines.engine_id of the engine whose labels were the targets"),
        ("label_depths", pa.list_(pa.int32()), "the label depths read"),
        ("table_versions", pa.string(),
         "the Delta version of every table read, JSON {table: version or null}"),
        ("train_rows", pa.int64(), "examples in the training split"),
        ("validation_rows", pa.int64(), "examples in the validation split"),
        ("position_keys_hash", pa.string(), "order-independent hash of the keys read, hex"),
        ("recorded_at", NOW, "when the dataset was read"),
    ],
    key=("model_id",),
)

MODEL_METRICS = Table(
    name="model_metrics",
    doc="One row per model and finished epoch, written as training goes (curves of a run in "
        "progress). A resumed run rewrites at most the epoch it was killed in.",
    columns=[
        ("model_id", pa.string(), "models.model_id of the run's model version"),
        ("epoch", pa.int32(), "0-based number of the epoch"),
        ("step", pa.int64(), "optimiser steps so far"),
        ("train_loss", pa.float64(), "mean training loss over the epoch"),
        ("val_loss", pa.float64(), "mean loss on the validation split after the epoch"),
        ("positions_per_s", pa.float64(), "training examples per second over the epoch"),
        ("learning_rate", pa.float64(), "the optimiser's learning rate at the end of the epoch"),
        ("extra", pa.string(), "JSON of kind-specific metrics (accuracy, AUC, ...)"),
        ("recorded_at", NOW, "when the epoch finished"),
    ],
    key=("model_id", "epoch"),
)

MODEL_EVENTS = Table(
    name="model_events",
    doc="Append-only life of a model: started, trained, exported, deployed, evaluated, "
        "promoted, retired, each with a JSON payload. The latest event is its status.",
    columns=[
        ("event_id", pa.string(), "the event's own id: uuid4 hex"),
        ("model_id", pa.string(), "models.model_id of the model"),
        ("event", pa.string(),
         "started, trained, exported, deployed, evaluated, promoted or retired"),
        ("payload", pa.string(),
         "what the event carries as a JSON object (paths, figures, reasons)"),
        ("recorded_at", NOW, "when the event happened"),
    ],
    key=("event_id",),
)

TABLES = [MODELS, MODEL_DATASETS, MODEL_METRICS, MODEL_EVENTS]
