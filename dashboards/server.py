"""``chesslab dashboard``: the dashboard served on 127.0.0.1 (stdlib HTTP server, read-only).

- ``/``: the page (``dashboards.report.shell``), whose script fills each panel and refreshes
  the live ones (training curves) every few seconds;
- ``/panel/<name>``: one panel's HTML, drawn from its named query;
- ``/api/<name>``: that query's rows as JSON.

Every request opens a new read-only connection (``warehouse.connect``: views over the
tables' current files, no writes possible), so a running training shows up as it goes. Only
GET is answered.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dashboards.panels import BY_NAME, panel_rows, render_panel
from dashboards.report import shell
from warehouse import Lake, connect
from warehouse.render import cell

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, home: str | os.PathLike[str] | None, host: str, port: int) -> None:
        self.lake = Lake(home)
        super().__init__((host, port), DashboardHandler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"


class DashboardHandler(BaseHTTPRequestHandler):
    server: DashboardServer

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        path = self.path.split("?", 1)[0]
        try:
            if path == "/":
                self.reply(200, "text/html", shell(self.server.lake.home))
            elif path.startswith("/panel/") and path[7:] in BY_NAME:
                with contextlib.closing(connect(self.server.lake)) as con:
                    page = render_panel(con, BY_NAME[path[7:]])
                self.reply(200, "text/html", page)
            elif path.startswith("/api/") and path[5:] in BY_NAME:
                with contextlib.closing(connect(self.server.lake)) as con:
                    rows = panel_rows(con, BY_NAME[path[5:]]).to_pylist()
                self.reply(200, "application/json", json.dumps(jsonable(rows)))
            else:
                self.reply(404, "text/plain", f"no page {path!r}")
        except Exception as exc:  # a broken panel shows its error, the server goes on
            log.warning("dashboard %s: %s", path, exc)
            self.reply(500, "text/plain", f"error: {exc}")

    def reply(self, status: int, content_type: str, text: str) -> None:
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the stdlib's name)
        log.debug("dashboard: " + format, *args)


def jsonable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows with JSON's types: numbers, text, lists, null (timestamps as ISO text)."""
    def value(v: Any) -> Any:
        if v is None or isinstance(v, bool | int | float | str):
            return v
        if isinstance(v, list):
            return [value(x) for x in v]
        return cell(v, 10_000)
    return [{k: value(v) for k, v in row.items()} for row in rows]


def make_server(home: str | os.PathLike[str] | None = None, host: str = DEFAULT_HOST,
                port: int = 8050) -> DashboardServer:
    """A dashboard server bound to ``host:port`` (port 0: a free one), not yet serving."""
    return DashboardServer(home, host, port)
