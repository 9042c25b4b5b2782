"""Tables written by ``pipelines.tournament``, ``pipelines.ratings`` and ``pipelines.sprt``."""
import pyarrow as pa

from warehouse.tables import Table

NOW = pa.timestamp("us", tz="UTC")

TOURNAMENTS = Table(
    name="tournaments",
    doc="One row per tournament; its id hashes the config, so a rerun resumes it.",
    schema=pa.schema([
        ("tournament_id", pa.string()),
        ("event", pa.string()),
        ("format", pa.string()),           # round-robin or gauntlet
        ("rounds", pa.int32()),            # game pairs per pairing
        ("planned_games", pa.int32()),
        ("time_control", pa.string()),     # PGN TimeControl tag
        ("nodes", pa.int64()),
        ("depth", pa.int32()),
        ("movetime_ms", pa.int32()),
        ("openings", pa.string()),         # opening file as given
        ("openings_sha256", pa.string()),
        ("config", pa.string()),           # the whole config as JSON
        ("created_at", NOW),
    ]),
    key=("tournament_id",),
)

TOURNAMENT_PLAYERS = Table(
    name="tournament_players",
    doc="The players of a tournament: spec, command, protocol, options, known rating.",
    schema=pa.schema([
        ("tournament_id", pa.string()),
        ("player", pa.string()),           # display name, as in the PGN
        ("engine_id", pa.string()),        # engines.engine_id: name, version, options
        ("kind", pa.string()),             # own, external or ladder
        ("protocol", pa.string()),         # uci or xboard
        ("command", pa.list_(pa.string())),
        ("options", pa.string()),          # JSON object
        ("anchor_elo", pa.int32()),        # UCI_Elo of a ladder rung, else null
    ]),
    key=("tournament_id", "player"),
)

TOURNAMENT_GAMES = Table(
    name="tournament_games",
    doc="One row per finished game, written as soon as it ends (a killed run loses only the "
        "games in flight).",
    schema=pa.schema([
        ("tournament_id", pa.string()),
        ("game_key", pa.string()),         # pairing:round:game, the schedule slot
        ("pairing", pa.int32()),
        ("round", pa.int32()),             # 0-based round (game pair)
        ("game_in_pair", pa.int32()),      # 0: first player White, 1: colours reversed
        ("white", pa.string()),
        ("black", pa.string()),
        ("opening_index", pa.int32()),
        ("opening_fen", pa.string()),
        ("opening_moves", pa.list_(pa.string())),   # book moves, UCI
        ("eco", pa.string()),
        ("opening", pa.string()),
        ("result", pa.string()),           # 1-0, 0-1, 1/2-1/2
        ("white_score", pa.float64()),
        ("termination", pa.string()),      # cutechess Termination tag
        ("reason", pa.string()),           # e.g. "sf_b terminated: exit code 3"
        ("plies", pa.int32()),             # plies played by the engines (book excluded)
        ("duration_s", pa.float64()),
        ("engine_s", pa.float64()),        # wall time spent waiting for the engines
        ("white_time_s", pa.float64()),
        ("black_time_s", pa.float64()),
        ("pgn", pa.string()),
        ("started_at", NOW),
        ("finished_at", NOW),
    ]),
    key=("tournament_id", "game_key"),
)

TOURNAMENT_EVENTS = Table(
    name="tournament_events",
    doc="Append-only progress of a tournament (started, resumed, finished, interrupted, "
        "sprt_stopped); the tournament_status view keeps the latest.",
    schema=pa.schema([
        ("tournament_id", pa.string()),
        ("event", pa.string()),
        ("games_done", pa.int32()),
        ("planned_games", pa.int32()),
        ("detail", pa.string()),
        ("recorded_at", NOW),
    ]),
    key=("tournament_id", "event", "recorded_at"),
)

RATINGS = Table(
    name="ratings",
    doc="BayesElo tables: one row per (rating run, player).",
    schema=pa.schema([
        ("rating_id", pa.string()),        # hash of the source's games and the config
        ("tournament_id", pa.string()),    # null when rated from a PGN file
        ("source", pa.string()),           # tournament id or PGN path
        ("player", pa.string()),
        ("rank", pa.int32()),
        ("elo", pa.float64()),
        ("plus", pa.float64()),
        ("minus", pa.float64()),
        ("games", pa.int32()),
        ("score", pa.float64()),           # points
        ("oppo", pa.float64()),
        ("draws", pa.int32()),
        ("advantage", pa.float64()),
        ("drawelo", pa.float64()),
        ("scale", pa.float64()),
        ("anchors", pa.string()),          # JSON object name -> Elo
        ("los", pa.string()),              # JSON object opponent -> P(player stronger)
        ("computed_at", NOW),
    ]),
    key=("rating_id", "player"),
)

SPRT_RESULTS = Table(
    name="sprt_results",
    doc="GSPRT evaluations (fishtest): counts, LLR, bounds and decision.",
    schema=pa.schema([
        ("sprt_id", pa.string()),          # hash of the counts and the test
        ("tournament_id", pa.string()),
        ("model", pa.string()),            # normalized or logistic
        ("elo0", pa.float64()),
        ("elo1", pa.float64()),
        ("alpha", pa.float64()),
        ("beta", pa.float64()),
        ("counts", pa.list_(pa.int64())),  # pentanomial LL..WW or trinomial L, D, W
        ("llr", pa.float64()),
        ("lower_bound", pa.float64()),
        ("upper_bound", pa.float64()),
        ("decision", pa.string()),         # H1, H0 or continue
        ("recorded_at", NOW),
    ]),
    key=("sprt_id",),
)

TABLES = [TOURNAMENTS, TOURNAMENT_PLAYERS, TOURNAMENT_GAMES, TOURNAMENT_EVENTS, RATINGS,
          SPRT_RESULTS]
