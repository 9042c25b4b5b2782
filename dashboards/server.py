"""``chesslab dashboard``: the dashboard served by a small ASGI app (Starlette on uvicorn),
read-only, on 127.0.0.1 unless asked otherwise.

- ``/``, ``/models/<id>``, ``/compare?kind=K&models=A&models=B[&filter=TEXT]``,
  ``/matches/<id>[?page=N]``, ``/ratings``: pages (``dashboards.pages``) whose script fetches their blocks;
- ``/chart/<name>?...``: a chart's Vega-Lite spec with its rows, rendered in the browser by
  vega-embed from ``/static/vega.js`` (vl-convert's bundle: no network needed);
- ``/table/<name>?...``: a table's HTML; ``/api/<query>?...``: a dashboard query's rows;
- ``/matches/<id>/games.pgn[?game=KEY]``: a match's games as PGN.

Parameters (model, kind, models, tournament, source, game, page) are bound to the named
queries, never spliced into SQL; log, smooth and x are a chart's options. Every request opens a new read-only connection (``warehouse.connect``:
views over the tables' current files), so a running training or match shows up as it goes.
Only GET and HEAD are answered; a request whose ``Host`` is not this server's (a page using
DNS rebinding) is refused. The listening socket has a backlog of 2048 and uvicorn answers
clients that go away without a traceback.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import uvicorn
import vl_convert
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from dashboards import charts, pages, tables
from dashboards.data import DashboardError, rows
from warehouse import Lake, connect
from warehouse.catalog import QueryError

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
BACKLOG = 2048
LOCAL_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
PARAMETERS = ("model", "kind", "tournament", "source", "game", "log", "smooth", "x", "page",
              "filter")
MAX_PARAMETER = 300
LINKS = tables.Links(served=True)
# The queries /api answers: those the charts and tables read.
API_QUERIES = frozenset(q for item in (*charts.CHARTS, *tables.TABLES) for q in item.queries)


@functools.cache
def vega_bundle() -> str:
    """vega, vega-lite and vega-embed in one script (vl-convert's bundle), built once."""
    # snippet None: the default one, which sets window.vegaEmbed (the stub says str)
    return str(vl_convert.javascript_bundle(None, vl_version=pages.VEGA_LITE))  # type: ignore[arg-type]


def request_params(request: Request) -> dict[str, Any]:
    """The bound parameters a request gives: single values and ``models`` as a list."""
    found: dict[str, Any] = {}
    for key in PARAMETERS:
        value = request.query_params.get(key)
        if value is not None:
            found[key] = value
    models = request.query_params.getlist("models")
    if models:
        found["models"] = models
    for key, value in [*found.items(), *(("models", m) for m in models)]:
        if len(str(value)) > MAX_PARAMETER:
            raise DashboardError(f"parameter {key!r} is longer than {MAX_PARAMETER} characters")
    return found


class Dashboard:
    """The app's handlers over one warehouse home."""

    def __init__(self, home: str | os.PathLike[str] | Lake) -> None:
        self.lake = home if isinstance(home, Lake) else Lake(home)

    @contextlib.contextmanager
    def connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        con = connect(self.lake)
        try:
            yield con
        finally:
            con.close()

    def page(self, make: Callable[[duckdb.DuckDBPyConnection], pages.Page]) -> HTMLResponse:
        with self.connection() as con:
            page = make(con)
        return HTMLResponse(pages.served_page(page, str(self.lake.home)), headers=NO_STORE)

    def overview(self, request: Request) -> Response:
        return self.page(lambda con: pages.overview())

    def model(self, request: Request) -> Response:
        model_id = request.path_params["model_id"]
        return self.page(lambda con: pages.model_page(con, model_id))

    def compare(self, request: Request) -> Response:
        params = request_params(request)
        return self.page(lambda con: pages.compare_page(
            con, params.get("kind") or None, params.get("models", []), LINKS,
            params.get("filter", "")))

    def match(self, request: Request) -> Response:
        tournament = request.path_params["tournament_id"]
        page = request_params(request).get("page")
        return self.page(lambda con: pages.match_page(con, tournament, page))

    def ratings(self, request: Request) -> Response:
        return self.page(pages.ratings_page)

    def chart(self, request: Request) -> Response:
        with self.connection() as con:
            body = pages.chart_spec(con, request.path_params["name"], request_params(request))
        return JSONResponse(body, headers=NO_STORE)

    def table(self, request: Request) -> Response:
        with self.connection() as con:
            text = pages.table_html(con, request.path_params["name"], request_params(request),
                                    LINKS)
        return HTMLResponse(text, headers=NO_STORE)

    def api(self, request: Request) -> Response:
        name = request.path_params["query"]
        if name not in API_QUERIES:
            raise DashboardError(f"no dashboard query {name!r}")
        with self.connection() as con:
            found = rows(con, name, request_params(request))
        return JSONResponse(found, headers=NO_STORE)

    def pgn(self, request: Request) -> Response:
        tournament = request.path_params["tournament_id"]
        params = {"tournament": tournament, "game": request.query_params.get("game")}
        with self.connection() as con:
            games = rows(con, "dashboard_match_pgn", params)
        if not games:
            raise DashboardError(f"no games of match {tournament!r}"
                                 + (f" with key {params['game']!r}" if params["game"] else ""))
        name = f"{tournament}{'-' + params['game'].replace(':', '-') if params['game'] else ''}"
        return PlainTextResponse(
            "\n\n".join(g["pgn"].strip() for g in games if g["pgn"]) + "\n",
            media_type="application/x-chess-pgn",
            headers={**NO_STORE, "Content-Disposition": f"attachment; filename={name}.pgn"})

    def script(self, request: Request) -> Response:
        return Response(vega_bundle(), media_type="text/javascript",
                        headers={"Cache-Control": "max-age=86400"})


NO_STORE = {"Cache-Control": "no-store"}


def guarded(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
    """A handler whose bad request is a 404 and whose failure is a 500 with one line (logged
    without a traceback: a broken query must not take the server down or flood its log)."""
    @functools.wraps(handler)
    def run(request: Request) -> Response:
        try:
            return handler(request)
        except DashboardError as exc:
            return PlainTextResponse(str(exc), status_code=404, headers=NO_STORE)
        except (QueryError, duckdb.Error, ValueError, KeyError) as exc:
            log.warning("dashboard %s: %s", request.url.path, exc)
            return PlainTextResponse(f"error: {exc}", status_code=500, headers=NO_STORE)
    return run


def make_app(home: str | os.PathLike[str] | Lake,
             allowed_hosts: tuple[str, ...] = LOCAL_NAMES) -> Starlette:
    """The dashboard app over ``home``'s warehouse, answering requests whose ``Host`` header
    names one of ``allowed_hosts``."""
    d = Dashboard(home)
    get = ["GET", "HEAD"]
    routes = [Route(path, guarded(handler), methods=get) for path, handler in (
        ("/", d.overview), ("/models/{model_id:path}", d.model), ("/compare", d.compare),
        ("/matches/{tournament_id}/games.pgn", d.pgn), ("/matches/{tournament_id}", d.match),
        ("/ratings", d.ratings), ("/chart/{name}", d.chart), ("/table/{name}", d.table),
        ("/api/{query}", d.api), ("/static/vega.js", d.script))]
    hosts = sorted({h.strip("[]") for h in allowed_hosts} | {f"[{h.strip('[]')}]"
                                                              for h in allowed_hosts
                                                              if ":" in h})
    return Starlette(routes=routes, middleware=[
        Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])


class DashboardServer:
    """uvicorn serving the app on a socket bound here (port 0: a free one), so the URL is
    known before it serves."""

    def __init__(self, home: str | os.PathLike[str] | Lake, host: str, port: int,
                 allowed_hosts: tuple[str, ...] = ()) -> None:
        self.socket = bind(host, port)
        names = (*LOCAL_NAMES, *allowed_hosts, *(() if host in ("0.0.0.0", "::") else (host,)))
        self.app = make_app(home, names)
        self.server = uvicorn.Server(uvicorn.Config(
            self.app, log_level="warning", access_log=False, backlog=BACKLOG,
            timeout_graceful_shutdown=2, lifespan="off"))
        self.thread: threading.Thread | None = None

    @property
    def server_address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.server_address
        return f"http://{f'[{host}]' if ':' in host else host}:{port}/"

    def serve_forever(self) -> None:
        self.server.run(sockets=[self.socket])

    def start(self) -> DashboardServer:
        """Serve in a background thread (tests); returns once it answers."""
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()
        while not self.server.started and self.thread.is_alive():
            threading.Event().wait(0.05)
        return self

    def shutdown(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=10)
        self.socket.close()


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise DashboardError(f"dashboard: cannot listen on {host}:{port}: {exc.strerror}") \
            from None
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def make_server(home: str | os.PathLike[str] | Lake, host: str = DEFAULT_HOST,
                port: int = 8050, allowed_hosts: tuple[str, ...] = ()) -> DashboardServer:
    """A dashboard server bound to ``host:port`` (port 0: a free one), not yet serving."""
    return DashboardServer(home, host, port, allowed_hosts)
