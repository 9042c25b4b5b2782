"""Game keys: which game records are one game.

A game record in a file is a game. Its key (``game_id``) is a hash of its tags (sorted by name),
its main-line SANs as written (without ``+``/``#``) and its *occurrence*: how many records with the same tags and
moves came before it in its file. So two identical records of one file (an engine match
replaying a game, a crosstable export repeating a pairing) are two games, a re-ingest gives
the same keys, and the same game in two files (each once) is one game. The first occurrence's
key is the hash of tags and moves alone, the key every game had before occurrences counted.

These functions know nothing of files or the warehouse, so a compiled tokenizer can produce
their inputs.

>>> base = game_key('{"Black": "Allies", "White": "Morphy"}', ["e4", "e5"])
>>> base
'845dd31aaf25dc13dd289167f9a3b45e'
>>> counter = Occurrences()
>>> keys = counter.keys([base, "0" * 32, base])
>>> keys[0] == base, keys[1] == "0" * 32, keys[2] == occurrence_key(base, 1) != base
(True, True, True)
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence


def tags_json(tags: Mapping[str, str]) -> str:
    """A game's tags as a JSON object, sorted by name (so the order they came in is no part
    of the game's key)."""
    return json.dumps(tags, sort_keys=True, ensure_ascii=False)


def game_key(tags: str, sans: Sequence[str]) -> str:
    """A hash of a game's tags (:func:`tags_json`) and main-line SANs as written: the key of
    its first occurrence in a file."""
    digest = hashlib.blake2b(tags.encode(), digest_size=16)
    digest.update(b"\n")
    digest.update(" ".join(sans).encode())
    return digest.hexdigest()


def occurrence_key(base: str, occurrence: int) -> str:
    """The key of the ``occurrence``-th (0-based) record of a file whose tags and moves hash to
    ``base``: ``base`` itself for the first, a hash of both after it.

    >>> occurrence_key("845dd31aaf25dc13dd289167f9a3b45e", 1)
    'b953cd86f7e44e294d64ebd0a237ea43'
    """
    if occurrence == 0:
        return base
    return hashlib.blake2b(f"{base}\n#{occurrence}".encode(), digest_size=16).hexdigest()


class Occurrences:
    """Numbers the records of one file in file order: feed it every record's base key, once,
    in order. Memory: one entry per distinct game of the file (about 100 bytes)."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.repeats = 0     # records that repeat an earlier record of the file

    def keys(self, bases: Sequence[str]) -> list[str]:
        """The keys of the next records, given their base keys (:func:`game_key`)."""
        seen = self.seen
        out = []
        for base in bases:
            occurrence = seen.get(base, 0)
            seen[base] = occurrence + 1
            if occurrence:
                self.repeats += 1
                base = occurrence_key(base, occurrence)
            out.append(base)
        return out
