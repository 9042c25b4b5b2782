"""The served dashboard's HTTP side (issue 32 §5, issue 37 §1): 127.0.0.1 by default, GET
only, the warehouse untouched; 200 concurrent requests all answered (the stdlib server's
listen backlog of 5 timed out 38% of them); a ``Host`` header naming another site refused
(DNS rebinding); clients that hang up mid-answer leave no traceback in the server's output."""
from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboards.server import BACKLOG, DashboardServer, make_server
from warehouse import Lake

ROOT = Path(__file__).resolve().parents[2]
CONCURRENT = 200


@pytest.fixture
def served(dashboard_home: Path) -> Iterator[DashboardServer]:
    server = make_server(dashboard_home, port=0).start()
    try:
        yield server
    finally:
        server.shutdown()


def get(url: str, host: str | None = None, timeout: float = 120) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_server_is_local_read_only_and_serves_json(served: DashboardServer,
                                                       dashboard_home: Path) -> None:
    assert served.server_address[0] == "127.0.0.1"
    versions = {t: Lake(dashboard_home).version(t) for t in ("labels", "ratings")}
    status, body = get(served.url + "api/dashboard_latest_ratings?source=t1")
    assert status == 200
    assert [(r["player"], r["elo"]) for r in json.loads(body)] == [("alphabeta", 41.0),
                                                                  ("sunfish", -41.0)]
    for bad in ("api/models", "chart/nothing", "models/nnue@9", "matches/nope", "../lake"):
        assert get(served.url + bad)[0] == 404, bad
    post = urllib.request.Request(served.url + "api/dashboard_models", data=b"x",
                                  method="POST")
    with pytest.raises(urllib.error.HTTPError, match="405"):
        urllib.request.urlopen(post, timeout=30)
    assert {t: Lake(dashboard_home).version(t) for t in versions} == versions


def test_pgn_download(served: DashboardServer) -> None:
    status, body = get(served.url + "matches/t1/games.pgn")
    assert status == 200 and body.decode().count("[White ") == 2
    status, body = get(served.url + "matches/t1/games.pgn?game=0:0:1")
    assert status == 200 and body.decode().startswith('[White "sunfish"]')


def test_a_foreign_host_header_is_refused(served: DashboardServer) -> None:
    """A page on evil.example that rebinds its name to 127.0.0.1 sends ``Host: evil.example``:
    refused; the local names are answered."""
    port = served.server_address[1]
    assert get(served.url + "api/dashboard_models", host=f"evil.example:{port}")[0] == 400
    assert get(served.url + "api/dashboard_models", host="evil.example")[0] == 400
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert get(served.url + "api/dashboard_models", host=host)[0] == 200, host


def test_200_concurrent_requests_are_all_answered(served: DashboardServer) -> None:
    """200 clients at once (pages and queries): every one gets its 200, none times out."""
    assert BACKLOG >= CONCURRENT
    start = threading.Barrier(CONCURRENT)
    paths = ["", "api/dashboard_models", "chart/positions-per-source", "table/matches"]

    def one(i: int) -> int:
        start.wait()
        try:
            return get(served.url + paths[i % len(paths)], timeout=240)[0]
        except OSError as exc:                 # a refused or timed-out connection
            return -1 if "timed out" in str(exc) else -2
    with concurrent.futures.ThreadPoolExecutor(CONCURRENT) as pool:
        statuses = list(pool.map(one, range(CONCURRENT)))
    assert statuses.count(200) == CONCURRENT, {s: statuses.count(s) for s in set(statuses)}


def test_clients_that_hang_up_leave_no_traceback(dashboard_home: Path) -> None:
    """``chesslab dashboard`` as a user starts it; clients reset their connections while the
    900 kB script and the pages are sent: the server's output has no traceback (the stdlib
    server printed BrokenPipeError/ConnectionResetError tracebacks) and it still answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "--home", str(dashboard_home), "dashboard",
         "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        cwd=ROOT)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        url = line.split(": ", 1)[1].split()[0]
        host, port = url.removeprefix("http://").rstrip("/").split(":")
        assert get(url + "static/vega.js")[0] == 200        # built once, then sent fast
        for path in ("/static/vega.js", "/", "/chart/training", "/matches/t1/games.pgn") * 5:
            hang_up(host, int(port), path)
        assert get(url + "api/dashboard_models")[0] == 200
        time.sleep(1)
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Reset" not in err, err


def hang_up(host: str, port: int, path: str) -> None:
    """Send a request and reset the connection before reading the answer."""
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        sock.recv(1)                                        # the answer has started
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_http_client_sees_the_page(served: DashboardServer) -> None:
    host, port = served.server_address
    connection = http.client.HTTPConnection(host, port, timeout=30)
    connection.request("GET", "/models/nnue@1")
    response = connection.getresponse()
    page = response.read().decode()
    assert response.status == 200 and "nnue@1" in page and "/static/vega.js" in page
