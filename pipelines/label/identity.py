"""An engine's identity: name, version and options, hashed into a stable ``engine_id``.

>>> identity = EngineIdentity.from_id_name("Stockfish 15.1", {"Threads": "1", "Hash": "16"})
>>> (identity.name, identity.version, identity.engine_id)
('Stockfish', '15.1', 'stockfish-15.1-563d6074')
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

SLUG = re.compile(r"[^a-z0-9.]+")


@dataclass(frozen=True)
class EngineIdentity:
    """Who produced a label. ``engine_id`` = ``name-version-<8 hex of sha256>``."""

    name: str
    version: str
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_id_name(cls, id_name: str, options: Mapping[str, str]) -> EngineIdentity:
        """Split ``id name`` ("Stockfish 15.1") into a name and a version (its last word
        when that starts with a digit)."""
        words = id_name.split()
        if len(words) > 1 and words[-1][:1].isdigit():
            return cls(" ".join(words[:-1]), words[-1], dict(options))
        return cls(id_name.strip() or "unknown", "", dict(options))

    @property
    def options_json(self) -> str:
        return json.dumps(dict(sorted(self.options.items())), separators=(",", ":"))

    @property
    def engine_id(self) -> str:
        payload = json.dumps([self.name, self.version, sorted(self.options.items())])
        digest = hashlib.sha256(payload.encode()).hexdigest()[:8]
        stem = "-".join(SLUG.sub("-", part.lower()).strip("-") for part in
                        (self.name, self.version) if part)
        return f"{stem or 'engine'}-{digest}"

    def row(self, path: str) -> dict[str, Any]:
        """The ``engines`` table row."""
        return {"engine_id": self.engine_id, "name": self.name, "version": self.version,
                "options": self.options_json, "path": path,
                "recorded_at": datetime.now(UTC)}
