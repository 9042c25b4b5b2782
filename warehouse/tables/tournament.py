"""Tables written by ``pipelines.tournament``, ``pipelines.ratings`` and ``pipelines.sprt``."""
import pyarrow as pa

from warehouse.tables import NOW, Table

TOURNAMENTS = Table(
    name="tournaments",
    doc="One row per tournament; its id hashes the config, so a rerun resumes it.",
    columns=[
        ("tournament_id", pa.string(),
         "hash of what decides the games (players, limits, openings, adjudication): a rerun "
         "resumes it"),
        ("event", pa.string(), "PGN Event tag of the games"),
        ("format", pa.string(), "the pairing scheme: round-robin or gauntlet"),
        ("rounds", pa.int32(), "game pairs per pairing"),
        ("planned_games", pa.int32(), "games the schedule holds"),
        ("time_control", pa.string(), "PGN TimeControl tag"),
        ("nodes", pa.int64(), "node limit per move (go nodes), else null"),
        ("depth", pa.int32(), "depth limit per move (go depth), else null"),
        ("movetime_ms", pa.int32(), "fixed time per move in milliseconds (go movetime), else null"),
        ("openings", pa.string(), "the opening file as given, null without one"),
        ("openings_sha256", pa.string(), "SHA-256 of the opening file, hex; null without one"),
        ("config", pa.string(), "the whole tournament config as JSON"),
        ("created_at", NOW, "when the tournament was first started (a resumed run keeps the row)"),
    ],
    key=("tournament_id",),
)

TOURNAMENT_PLAYERS = Table(
    name="tournament_players",
    doc="The players of a tournament: spec, command, protocol, options, known rating.",
    columns=[
        ("tournament_id", pa.string(), "tournaments.tournament_id"),
        ("player", pa.string(), "the player's display name, as in the PGN"),
        ("engine_id", pa.string(), "engines.engine_id: name, version, options"),
        ("kind", pa.string(), "own (a chesslab engine), external or ladder (a Stockfish rung)"),
        ("protocol", pa.string(), "the protocol the player speaks: uci or xboard"),
        ("command", pa.list_(pa.string()), "the program and its arguments that start the player"),
        ("options", pa.string(), "the protocol options set on the player, JSON object"),
        ("anchor_elo", pa.int32(), "UCI_Elo of a ladder rung, else null"),
    ],
    key=("tournament_id", "player"),
)

TOURNAMENT_GAMES = Table(
    name="tournament_games",
    doc="One row per finished game, written as soon as it ends (a killed run loses only the "
        "games in flight).",
    columns=[
        ("tournament_id", pa.string(), "tournaments.tournament_id"),
        ("game_key", pa.string(), "pairing:round:game, the schedule slot"),
        ("pairing", pa.int32(), "0-based number of the pairing in the schedule"),
        ("round", pa.int32(), "0-based round (game pair)"),
        ("game_in_pair", pa.int32(), "0: first player White, 1: colours reversed"),
        ("white", pa.string(), "the player with White (tournament_players.player)"),
        ("black", pa.string(), "the player with Black (tournament_players.player)"),
        ("opening_index", pa.int32(), "0-based index of the opening in the opening set"),
        ("opening_fen", pa.string(),
         "the opening's start position, before its book moves (opening_moves)"),
        ("opening_moves", pa.list_(pa.string()), "the book moves played from opening_fen, UCI"),
        ("eco", pa.string(), "the opening's ECO code, when the opening file gives one"),
        ("opening", pa.string(), "the opening's name, when the opening file gives one"),
        ("result", pa.string(), "the game's result: 1-0, 0-1, 1/2-1/2"),
        ("white_score", pa.float64(), "White's points: 1, 0.5 or 0"),
        ("termination", pa.string(), "how the game ended, as cutechess's Termination tag"),
        ("reason", pa.string(), "e.g. \"sf_b terminated: exit code 3\""),
        ("plies", pa.int32(), "plies played by the engines (book excluded)"),
        ("duration_s", pa.float64(), "wall-clock seconds the game took"),
        ("engine_s", pa.float64(), "wall time spent waiting for the engines"),
        ("white_time_s", pa.float64(), "clock seconds White's engine used (the move it lost on "
         "time included)"),
        ("black_time_s", pa.float64(), "clock seconds Black's engine used (the move it lost on "
         "time included)"),
        ("white_budget_s", pa.float64(), "seconds White was given: under a clock its base time, "
         "the increment of each move made in time and each period's refill; under a move time "
         "that time for each move asked; null without a time limit or before it was recorded"),
        ("black_budget_s", pa.float64(), "seconds Black was given (as white_budget_s)"),
        ("pgn", pa.string(), "the game as PGN text (move comments as cutechess: +0.35/12 0.101s)"),
        ("started_at", NOW, "when the game started"),
        ("finished_at", NOW, "when the game ended"),
        ("worker", pa.string(), "the games runner's worker that played it (host:pid); null "
         "before games ran on a cluster"),
        ("clock_scale", pa.float64(), "the factor the worker scaled the time control by "
         "(reference over its bench nodes/s); null: not scaled"),
    ],
    key=("tournament_id", "game_key"),
)

TOURNAMENT_EVENTS = Table(
    name="tournament_events",
    doc="Append-only progress of a tournament (started, resumed, finished, interrupted, "
        "sprt_stopped; the tournament_status view keeps the latest) and what went wrong on "
        "its cluster (worker_lost, batch_replayed).",
    columns=[
        ("tournament_id", pa.string(), "tournaments.tournament_id"),
        ("event", pa.string(), "started, resumed, finished, interrupted or sprt_stopped; "
         "worker_lost (a worker gone, with the games it was playing), batch_replayed (those "
         "games played again, by which worker)"),
        ("games_done", pa.int32(), "games finished when the event happened"),
        ("planned_games", pa.int32(), "games planned when the event happened"),
        ("detail", pa.string(),
         "why (an interruption's reason, the SPRT's decision); may be empty"),
        ("recorded_at", NOW, "when the event happened"),
    ],
    key=("tournament_id", "event", "recorded_at"),
)

RATINGS = Table(
    name="ratings",
    doc="BayesElo tables: one row per (rating run, player).",
    columns=[
        ("rating_id", pa.string(), "hash of the source's games and the config"),
        ("tournament_id", pa.string(), "null when rated from a PGN file"),
        ("source", pa.string(), "where the games came from: the tournament id or the PGN path"),
        ("player", pa.string(), "the player's name in the games"),
        ("rank", pa.int32(), "1-based place in the table, best first"),
        ("elo", pa.float64(), "the player's BayesElo rating (anchored when anchors are given)"),
        ("plus", pa.float64(), "Elo above elo to the upper end of the confidence interval"),
        ("minus", pa.float64(), "Elo below elo to the lower end of the confidence interval"),
        ("games", pa.int32(), "games the player played in the rated set"),
        ("score", pa.float64(), "points the player scored"),
        ("oppo", pa.float64(), "games-weighted average rating of the player's opponents"),
        ("draws", pa.int32(), "drawn games of the player"),
        ("advantage", pa.float64(), "White's advantage in Elo, given or estimated from the games"),
        ("drawelo", pa.float64(), "the draw Elo, given or estimated from the games"),
        ("scale", pa.float64(),
         "factor applied to the printed ratings (1.0: plain Bradley-Terry Elo)"),
        ("anchors", pa.string(), "the anchored players' given ratings, JSON object name -> Elo"),
        ("los", pa.string(), "JSON object opponent -> P(player stronger)"),
        ("computed_at", NOW, "when the table was computed"),
    ],
    key=("rating_id", "player"),
)

SPRT_RESULTS = Table(
    name="sprt_results",
    doc="GSPRT evaluations (fishtest): counts, LLR, bounds and decision.",
    columns=[
        ("sprt_id", pa.string(), "hash of the counts and the test"),
        ("tournament_id", pa.string(), "tournaments.tournament_id of the games counted, else null"),
        ("model", pa.string(), "the Elo model of elo0 and elo1: normalized or logistic"),
        ("elo0", pa.float64(), "Elo under H0 (see model)"),
        ("elo1", pa.float64(), "Elo under H1"),
        ("alpha", pa.float64(), "probability of accepting H1 when H0 holds"),
        ("beta", pa.float64(), "probability of accepting H0 when H1 holds"),
        ("counts", pa.list_(pa.int64()), "pentanomial LL..WW or trinomial L, D, W"),
        ("llr", pa.float64(), "log-likelihood ratio of H1 against H0 for the counts"),
        ("lower_bound", pa.float64(),
         "LLR at or below which H0 is accepted: log(beta / (1 - alpha))"),
        ("upper_bound", pa.float64(),
         "LLR at or above which H1 is accepted: log((1 - beta) / alpha)"),
        ("decision", pa.string(), "H1 (accept), H0 (reject) or continue"),
        ("recorded_at", NOW, "when the test was evaluated"),
    ],
    key=("sprt_id",),
)

TABLES = [TOURNAMENTS, TOURNAMENT_PLAYERS, TOURNAMENT_GAMES, TOURNAMENT_EVENTS, RATINGS,
          SPRT_RESULTS]
