"""Engine specs: how to start a player of a tournament, named by a short string.

Spec strings:

- ``alphabeta:eval=hce-simple`` -- one of the project's own engines (the programs
  :mod:`engines.uci` discovers: ``alphabeta``, ``mcts``, ``puct``, ``stockfish-volatility``),
  started as ``<python> -m engines.uci alphabeta --eval hce-simple``;
  ``alphabeta:eval=nnue,model=nnue@3`` plays a model version (passed as the UCI option
  ``Model``; chesslab gives the program the version's file,
  ``pipelines.models.deploy.resolve_player``);
- ``stockfish`` -- Stockfish at full strength; ``stockfish@1350`` -- Stockfish limited by
  ``UCI_LimitStrength``/``UCI_Elo`` (the rating ladder; the number is the player's anchor);
  ``stockfish@1350-2350/250`` or ``stockfish@1350,1800`` name several rungs at once;
- ``toga2``, ``ethereal``, ``glaurung``, ``fruit``, ``gnuchess`` (UCI) or ``phalanx``
  (xboard) -- Debian engines found on ``PATH`` or in ``/usr/games``;
- ``uci:/path/to/engine`` or ``xboard:/path/to/engine`` -- any other program;
- any of these followed by ``?Option=value&Other=value`` sets protocol options
  (``stockfish?Threads=1&Hash=16``), and by ``#name`` gives the player a display name.

An engines file (TOML) can name players: ``[players.sf_fast]`` with ``spec = "stockfish"``
or ``command = ["/path", "arg"]``, ``protocol``, ``options = {Hash = 16}``, ``elo = 1500``.

>>> spec = parse_engine("stockfish@1500")
>>> spec.name, spec.options["UCI_Elo"], spec.elo
('stockfish@1500', 1500, 1500)
>>> parse_engine("alphabeta:eval=hce").command[1:]
('-m', 'engines.uci', 'alphabeta', '--eval', 'hce')

:func:`player_identity` gives a player's row of the ``engines`` table (the identity labels
use too): own engines from their program's options, external ones from their ``id name``.
:func:`check_player` checks an own engine's settings and options, and loads the files they
name, before any game (one line naming the player, the bad setting and what is valid).
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import chess.engine

from engines import uci
from engines.identity import EngineIdentity
from engines.stamps import content_id

OptionValue = str | int | bool
#: Seconds an external engine may take to start and answer ``uci`` when its id is read.
START_TIMEOUT_S = 30.0
PROTOCOLS = ("uci", "xboard")
# Debian engines and the protocol each one speaks (program name on PATH, arguments).
KNOWN_ENGINES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "stockfish": ("stockfish", (), "uci"),
    "toga2": ("toga2", (), "uci"),
    "ethereal": ("ethereal-chess", (), "uci"),
    "glaurung": ("glaurung", (), "uci"),
    "fruit": ("fruit", (), "uci"),
    "phalanx": ("phalanx", ("-l-",), "xboard"),
    "gnuchess": ("gnuchess", ("--uci",), "uci"),
}
# fairymax is left out: it declares ``feature setboard=0`` and python-chess needs setboard.
SEARCH_DIRS = ("/usr/games", "/usr/local/games")


class EngineSpecError(ValueError):
    """A spec string or engines file entry that cannot be turned into a player."""


@dataclass(frozen=True)
class EngineSpec:
    """One tournament player: its display name, command line, protocol and options.

    elo: the player's known rating (the ``UCI_Elo`` of a ladder rung), used as an anchor.
    kind: ``own``, ``external`` or ``ladder``.
    """

    name: str
    command: tuple[str, ...]
    protocol: str = "uci"
    options: Mapping[str, OptionValue] = field(default_factory=dict)
    elo: int | None = None
    kind: str = "external"

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise EngineSpecError(f"engine {self.name!r}: unknown protocol {self.protocol!r}")
        if not self.command:
            raise EngineSpecError(f"engine {self.name!r}: empty command")

    @property
    def setup_hash(self) -> str:
        """Hash of how the player is started (kind, command, protocol, options; not the
        interpreter path): part of a tournament's id. The engine's identity, which labels
        share, is :func:`player_identity`."""
        command = list(self.command[1:]) if self.kind == "own" else list(self.command)
        return content_id([self.kind, command, self.protocol, dict(sorted(self.options.items()))])

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "command": list(self.command), "protocol": self.protocol,
                "options": dict(self.options), "elo": self.elo, "kind": self.kind}


def expand_ladder(text: str) -> list[str]:
    """``stockfish@1350-1850/250`` or ``stockfish@1350,1600`` -> one spec per rung.

    >>> expand_ladder("stockfish@1350-1850/250")
    ['stockfish@1350', 'stockfish@1600', 'stockfish@1850']
    """
    name, at, rungs = text.partition("@")
    if not at or not any(c in rungs for c in ",-/") or "?" in rungs or "#" in rungs:
        return [text]
    if "," in rungs:
        return [f"{name}@{rung.strip()}" for rung in rungs.split(",") if rung.strip()]
    span, _, step = rungs.partition("/")
    low, dash, high = span.partition("-")
    try:
        first, last, stride = int(low), int(high if dash else low), int(step or 250)
    except ValueError:
        raise EngineSpecError(f"bad ladder {text!r}: use NAME@LOW-HIGH/STEP") from None
    if stride <= 0 or last < first:
        raise EngineSpecError(f"bad ladder {text!r}: empty range")
    return [f"{name}@{elo}" for elo in range(first, last + 1, stride)]


def parse_engine(text: str, players: Mapping[str, EngineSpec] | None = None) -> EngineSpec:
    """The player a spec string names (``players`` are those of an engines file)."""
    raw = text.strip()
    if not raw:
        raise EngineSpecError("empty engine spec")
    body, _, label = raw.partition("#")
    body, _, query = body.partition("?")
    options = parse_options(query, raw)
    base = resolve_base(body, raw, players or {})
    merged = {**base.options, **options}
    return EngineSpec(name=label or (base.name if not query else raw.partition("#")[0]),
                      command=base.command, protocol=base.protocol, options=merged,
                      elo=base.elo, kind=base.kind)


def resolve_base(body: str, raw: str, players: Mapping[str, EngineSpec]) -> EngineSpec:
    if body in players:
        return players[body]
    head, sep, rest = body.partition(":")
    if sep and head in PROTOCOLS:
        return external(rest, head, name=body)
    if head in uci.program_names():
        return own_engine(head, rest if sep else "", raw)
    name, _, elo = body.partition("@")
    if name in KNOWN_ENGINES:
        return known_engine(name, elo, raw)
    if os.sep in body or Path(body).exists():
        return external(body, "uci", name=Path(body).name)
    raise EngineSpecError(
        f"unknown engine {raw!r}: use one of "
        f"{', '.join([*uci.program_names(), *KNOWN_ENGINES])}, "
        "an engines-file name, or uci:PATH / xboard:PATH")


def parse_options(query: str, raw: str) -> dict[str, OptionValue]:
    options: dict[str, OptionValue] = {}
    for item in filter(None, query.split("&")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise EngineSpecError(f"engine {raw!r}: option {item!r} is not NAME=VALUE")
        options[key] = option_value(value)
    return options


def option_value(text: str) -> OptionValue:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return text


def own_engine(name: str, settings: str, raw: str) -> EngineSpec:
    """``alphabeta:eval=hce,depth=6`` -> ``python -m engines.uci alphabeta --eval hce ...``."""
    arguments: list[str] = []
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not key:
            raise EngineSpecError(f"engine {raw!r}: bad setting {item!r}")
        arguments += [f"--{key.replace('_', '-')}"] + ([value] if eq else [])
    label = name if not settings else f"{name}:{settings}"
    return EngineSpec(name=label, command=(sys.executable, "-m", "engines.uci", name,
                                           *arguments), kind="own")


def known_engine(name: str, elo: str, raw: str) -> EngineSpec:
    program, arguments, protocol = KNOWN_ENGINES[name]
    path = find_program(program)
    if path is None:
        raise EngineSpecError(f"engine {raw!r}: program {program!r} not found on PATH or in "
                              f"{', '.join(SEARCH_DIRS)} (Debian package?)")
    if not elo:
        return EngineSpec(name=name, command=(path, *arguments), protocol=protocol)
    if name != "stockfish" or not elo.isdigit():
        raise EngineSpecError(f"engine {raw!r}: only stockfish@ELO takes a rating")
    return EngineSpec(name=f"{name}@{elo}", command=(path,), protocol=protocol,
                      options={"UCI_LimitStrength": True, "UCI_Elo": int(elo)},
                      elo=int(elo), kind="ladder")


def external(path: str, protocol: str, name: str) -> EngineSpec:
    found = find_program(path)
    if found is None:
        raise EngineSpecError(f"engine program {path!r} not found")
    return EngineSpec(name=name, command=(found,), protocol=protocol)


def find_program(program: str) -> str | None:
    if os.sep in program:
        return program if os.access(program, os.X_OK) else None
    found = shutil.which(program)
    if found:
        return found
    for folder in SEARCH_DIRS:
        candidate = Path(folder) / program
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def load_engines_file(path: str | os.PathLike[str]) -> dict[str, EngineSpec]:
    """Players named in a TOML engines file (``[players.NAME]`` tables)."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EngineSpecError(f"cannot read engines file {str(path)!r}: {exc}") from None
    players: dict[str, EngineSpec] = {}
    for name, entry in data.get("players", {}).items():
        players[name] = engine_from_entry(name, entry, players, str(path))
    return players


def engine_from_entry(name: str, entry: Mapping[str, Any], players: Mapping[str, EngineSpec],
                      source: str) -> EngineSpec:
    options = {str(k): v for k, v in entry.get("options", {}).items()}
    if "spec" in entry:
        base = parse_engine(str(entry["spec"]), players)
    elif "command" in entry:
        command = entry["command"]
        command = [command] if isinstance(command, str) else list(command)
        path = find_program(command[0]) or command[0]
        base = EngineSpec(name=name, command=(path, *command[1:]),
                          protocol=entry.get("protocol", "uci"))
    else:
        raise EngineSpecError(f"{source}: player {name!r} needs 'spec' or 'command'")
    elo = entry.get("elo", base.elo)
    return EngineSpec(name=name, command=base.command, protocol=base.protocol,
                      options={**base.options, **options}, elo=elo,
                      kind="ladder" if elo is not None else base.kind)


# --------------------------------------------------------------------------------------------
# Checking a player before any game
# --------------------------------------------------------------------------------------------

def is_own(spec: EngineSpec) -> bool:
    """Whether the player is one of the project's programs (``python -m engines.uci NAME``)."""
    return len(spec.command) > 3 and spec.command[1:3] == ("-m", "engines.uci")


def check_player(spec: EngineSpec, load: bool = True) -> None:
    """Check an own engine in this process, as its program would at start: its settings
    (``alphabeta:eval=hce``) against the program's command-line options (names, choices,
    types, then the program's own checks), its ``?Option=value`` against the UCI options it
    declares (names and values) and, with ``load``, the files they name (the network, the
    volatility model) loaded. EngineSpecError, one line naming the player, the bad setting or
    value and what is valid. External engines are checked when they start."""
    if not is_own(spec):
        return
    engine = own_program_spec(spec)
    values = checked_option_values(engine, spec)
    if load:
        try:
            uci.preload(engine, values)
        except (ValueError, LookupError) as exc:
            raise EngineSpecError(f"engine {spec.name!r}: {exc}") from None


def own_program_spec(spec: EngineSpec) -> uci.EngineSpec:
    """The program of an own-engine player built from its settings; EngineSpecError naming
    an unknown setting, a value outside its choices or of the wrong type."""
    name, argv = spec.command[3], list(spec.command[4:])
    try:
        if ":" in name:     # module:function builds its own spec from argv
            return uci.load_spec(name, argv)
        program = uci.load_program(name)
        options = program.options(**setting_values(program, argv, spec.name))
        return program.spec(options)
    except EngineSpecError:
        raise
    except (ValueError, LookupError, ImportError) as exc:
        raise EngineSpecError(f"engine {spec.name!r}: {exc}") from None


def setting_values(program: uci.Program, argv: list[str], player: str) -> dict[str, Any]:
    """``--flag value`` pairs of a program's command line as its options' field values."""
    fields = {f.name: f for f in dataclasses.fields(program.options)}
    values: dict[str, Any] = {}
    for index in range(0, len(argv), 2):
        flag = argv[index]
        key = flag.removeprefix("--").replace("-", "_")
        if not flag.startswith("--") or key not in fields:
            raise EngineSpecError(
                f"engine {player!r}: no setting {key!r}{did_you_mean(key, fields)}; "
                f"{program.name} settings: {', '.join(fields)}")
        if index + 1 >= len(argv):
            raise EngineSpecError(f"engine {player!r}: setting {key!r} needs a value "
                                  f"({key}=VALUE)")
        values[key] = setting_value(fields[key], argv[index + 1], player)
    return values


def setting_value(f: dataclasses.Field[Any], text: str, player: str) -> Any:
    choices = [c for c in f.metadata.get("choices") or () if c]
    if choices and text not in choices and text != f.default:
        raise EngineSpecError(f"engine {player!r}: {f.name} {text!r} is not valid"
                              f"{did_you_mean(text, choices)}; valid: {', '.join(choices)}")
    kind: Callable[[str], Any] = type(f.default)   # every option field has a default
    try:
        return kind(text)
    except ValueError:
        raise EngineSpecError(f"engine {player!r}: {f.name} takes "
                              f"{'an integer' if kind is int else 'a number'}, got "
                              f"{text!r}") from None


def checked_option_values(engine: uci.EngineSpec, spec: EngineSpec) -> dict[str, Any]:
    """The program's option values with the spec's ``?Option=value`` applied, each one
    checked against the option's declaration (UCI names match case-insensitively)."""
    declared = {o.name.lower(): o for o in engine.all_options()}
    front = {o.name for o in uci.FRONT_END_OPTIONS}
    values = engine.defaults()
    for key, value in spec.options.items():
        option = declared.get(key.lower())
        if option is None:
            names = [o.name for o in engine.all_options()]
            raise EngineSpecError(f"engine {spec.name!r}: no option {key!r}"
                                  f"{did_you_mean(key, names)}; options: {', '.join(names)}")
        text = str(value).lower() if isinstance(value, bool) else str(value)
        try:
            parsed = option.parse(text) if option.kind != "button" else None
        except uci.UciError as exc:
            raise EngineSpecError(f"engine {spec.name!r}: {exc}") from None
        if option.name not in front and option.kind != "button":
            values[option.name] = parsed
    return values


def did_you_mean(word: str, choices: Any) -> str:
    """`` (did you mean 'eval'?)`` when a choice is close to ``word``, else empty.

    >>> did_you_mean("evl", ["eval", "nnue"]), did_you_mean("zzz", ["eval"])
    (" (did you mean 'eval'?)", '')
    """
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --------------------------------------------------------------------------------------------
# Identity: the player's row of the ``engines`` table
# --------------------------------------------------------------------------------------------

def chesslab_version() -> str:
    """The installed chesslab version."""
    try:
        return metadata.version("chesslab")
    except metadata.PackageNotFoundError:
        return "0+unknown"


#: The files whose text is an own engine's code: what a change to the way it plays touches.
ENGINE_SOURCES = ("*.py", "*.pyx", "*.pxd", "*.h", "*.npz")   # .npz: the shipped net


def source_revision(root: Path) -> str:
    """8 hex of sha256 over the sources under ``root`` (relative paths and bytes, sorted;
    ``__pycache__`` left out)."""
    digest = hashlib.sha256()
    files = sorted({f for pattern in ENGINE_SOURCES for f in root.rglob(pattern)
                    if "__pycache__" not in f.relative_to(root).parts})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:8]


@functools.lru_cache(maxsize=1)
def engines_revision() -> str:
    """The ``engines`` package's :func:`source_revision`.

    The package version alone would let a tournament resume across a change of the search
    or evaluation and mix games of two programs under one engine id; any change under
    ``engines/`` makes a new id for every own engine instead (coarse, never too fine)."""
    return source_revision(Path(__file__).resolve().parent)


def own_version() -> str:
    """The version of every own engine: chesslab's and the engines' code revision,
    ``0.1.0+rev.1a2b3c4d``."""
    return f"{chesslab_version()}+rev.{engines_revision()}"


def player_identity(spec: EngineSpec) -> EngineIdentity:
    """Who the player is: own engines from their program and options (nothing is started),
    external ones (ladder rungs included) from the ``id name`` they answer with."""
    if spec.command[1:3] == ("-m", "engines.uci"):
        return own_identity(spec)
    return EngineIdentity.from_id_name(read_id_name(spec), spec.options)


def own_identity(spec: EngineSpec) -> EngineIdentity:
    """An own engine: every option of its program, the spec's ``?Option=value`` applied.

    >>> identity = own_identity(parse_engine("alphabeta:eval=nnue,model=nnue@3"))
    >>> identity.search, identity.evaluation, identity.model, identity.options["Model"]
    ('alphabeta', 'nnue', 'nnue@3', 'nnue@3')
    """
    name, argv = spec.command[3], spec.command[4:]
    try:
        engine = uci.load_spec(name, argv)
    except ValueError as exc:
        raise EngineSpecError(f"engine {spec.name!r}: {exc}") from None
    values = program_values(engine, spec)
    return EngineIdentity(
        name=name, version=own_version(), options=values, kind="own", search=name,
        evaluation=str(values[uci.EVAL_OPTION]) if uci.EVAL_OPTION in values else None,
        model=str(values.get(uci.MODEL_OPTION) or "") or None)


def program_values(engine: uci.EngineSpec, spec: EngineSpec) -> dict[str, OptionValue]:
    """The program's option values that decide its play: command-line defaults, then the
    spec's options (UCI names match case-insensitively); front-end options are left out."""
    declared = {o.name.lower(): o for o in engine.options}
    front = {o.name.lower() for o in uci.FRONT_END_OPTIONS}
    values: dict[str, OptionValue] = {o.name: o.default for o in engine.options}
    for key, value in spec.options.items():
        option = declared.get(key.lower())
        if option is None and key.lower() not in front:
            raise EngineSpecError(f"engine {spec.name!r}: no option {key!r}; options: "
                                  f"{', '.join(o.name for o in engine.options)}")
        if option is not None:
            values[option.name] = value
    return {k: v for k, v in values.items() if k not in engine.identity_excludes}


def read_id_name(spec: EngineSpec) -> str:
    """Start the engine, read the name it gives (UCI ``id name``, xboard ``myname``), quit."""
    popen = chess.engine.SimpleEngine.popen_uci if spec.protocol == "uci" \
        else chess.engine.SimpleEngine.popen_xboard
    try:
        engine = popen(list(spec.command), timeout=START_TIMEOUT_S, stderr=subprocess.DEVNULL)
    except (OSError, chess.engine.EngineError, TimeoutError) as exc:
        raise EngineSpecError(f"engine {spec.name!r} did not start: "
                              f"{type(exc).__name__}: {exc}") from None
    try:
        return str(engine.id.get("name") or Path(spec.command[0]).name)
    finally:
        engine.quit()
