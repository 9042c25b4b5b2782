"""The games runner's options on each command that plays games: a command offers only those it
uses; one it would ignore is refused by the parser with one line."""
from __future__ import annotations

import pytest

from flows.cli import build_parser
from flows.runtime import games_options
from pipelines.games import GamesOptions

PAIRS = [("--batch-pairs", "2"), ("--clock-reference-nps", "1000000")]
IGNORED = [*[(command, option, value) for command in ("selfplay", "selfplay-train", "lmr-data",
                                                       "datagen")
             for option, value in PAIRS],
           ("selfplay", "--threads-per-game", "2"), ("selfplay-train", "--threads-per-game", "2")]


@pytest.mark.parametrize(("command", "option", "value"), IGNORED)
def test_an_option_the_command_ignores_is_refused(command: str, option: str, value: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser(command).parse_args([command, option, value])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert f"unrecognized arguments: {option} {value}" in error


@pytest.mark.parametrize("argv", [["tournament", "a", "b"], ["evaluate", "nnue@1"],
                                  ["checkpoints", "run-1"], ["mcc", "roundrobin"],
                                  ["mcc", "epsilon"]])
def test_tournaments_take_every_games_option(argv: list[str]) -> None:
    """Commands that play a tournament's batches of game pairs use them all."""
    args = build_parser(argv[0]).parse_args(
        [*argv, "--workers", "2", "--games-per-worker", "3", "--threads-per-game", "2",
         "--batch-pairs", "4", "--clock-reference-nps", "1000000"])
    assert games_options(args) == GamesOptions(workers=2, games_per_worker=3, threads_per_game=2,
                                               batch_pairs=4, clock_reference_nps=1e6)


def test_own_games_commands_keep_the_options_they_use() -> None:
    """``lmr-data`` and ``datagen`` size local workers by ``--threads-per-game``; ``selfplay``
    takes ``--games-per-worker`` and ``--cluster``."""
    from flows.commands.selfplay_train import config_from
    from flows.runtime import ONE_GAME_WORKERS, PAIRS_ONLY

    for command in ("lmr-data", "datagen"):
        args = build_parser(command).parse_args([command, "--workers", "2",
                                                 "--threads-per-game", "2"])
        assert games_options(args, skip=PAIRS_ONLY) == GamesOptions(workers=2,
                                                                    threads_per_game=2)
    args = build_parser("selfplay").parse_args(["selfplay", "--games-per-worker", "2",
                                                "--cluster", "tcp://h:8786"])
    assert games_options(args, skip=ONE_GAME_WORKERS) == GamesOptions(cluster="tcp://h:8786",
                                                                      games_per_worker=2)
    train = build_parser("selfplay-train")
    assert config_from(train.parse_args(["selfplay-train", "--games-per-worker", "2",
                                         "--workers", "3"])).games_options() \
        == GamesOptions(workers=3, games_per_worker=2)
