"""The served dashboard in a real browser (issue 11): ``chesslab dashboard`` on a free local
port, opened in headless Chromium (Debian's ``chromium`` package, installed by
scripts/bootstrap.sh), whose script fills every panel from ``/panel/<name>``; the rendered DOM
shows the fixture warehouse's figures, and a screenshot is saved. Also: the server binds
127.0.0.1, answers only GET and never writes to the warehouse."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboards.server import DashboardServer, make_server
from warehouse import Lake

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def served(dashboard_home: Path) -> Iterator[DashboardServer]:
    server = make_server(dashboard_home, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def chromium(*args: str) -> str:
    if CHROMIUM is None:
        pytest.skip("needs Debian's chromium (scripts/bootstrap.sh installs it)")
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", "--no-first-run", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def section(dom: str, name: str) -> str:
    return dom.split(f'id="panel-{name}"', 1)[1].split("</section>", 1)[0]


def values(dom: str, name: str) -> list[str]:
    return re.findall(r'data-value="([^"]*)"', section(dom, name))


def test_the_browser_renders_the_warehouse_figures(served: DashboardServer,
                                                   tmp_path: Path) -> None:
    """After the page's script ran, each chart holds the figures of the fixture warehouse:
    34 positions of the Opera game, nnue@2's loss 0.1234, the Elo 41 and -41, the LLR."""
    dom = chromium("--virtual-time-budget=15000", "--dump-dom", served.url)
    assert 'data-ready="true"' in dom                     # every panel was fetched
    assert dom.count('data-loaded="true"') == dom.count("data-panel=")
    assert values(dom, "positions-per-source") == ["34"]
    assert values(dom, "labels") == ["34"]
    assert "0.1234" in values(dom, "training")
    assert values(dom, "ratings") == ["41", "-41"]
    assert values(dom, "sprt") == ["1.625"]
    assert values(dom, "ladder") == ["1712", "1788"]
    assert "<polyline" in section(dom, "volatility-roc")
    assert re.search(r"at 20\d\d-\d\d-\d\d \d\d:\d\d UTC", section(dom, "coverage-over-time"))
    screenshot = tmp_path / "dashboard.png"
    chromium("--virtual-time-budget=15000", "--window-size=1400,2400",
             f"--screenshot={screenshot}", served.url)
    assert screenshot.stat().st_size > 10_000 and screenshot.read_bytes()[:4] == b"\x89PNG"


def test_the_server_is_local_read_only_and_serves_json(served: DashboardServer,
                                                       dashboard_home: Path) -> None:
    assert served.server_address[0] == "127.0.0.1"
    versions = {t: Lake(dashboard_home).version(t) for t in ("labels", "ratings")}
    with urllib.request.urlopen(served.url + "api/ratings", timeout=30) as response:
        rows = json.load(response)
    assert [(r["player"], r["elo"]) for r in rows] == [("alphabeta", 41.0), ("sunfish", -41.0)]
    for bad in ("api/nothing", "../lake"):
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(served.url + bad, timeout=30)
    post = urllib.request.Request(served.url + "api/ratings", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError, match="501"):
        urllib.request.urlopen(post, timeout=30)
    assert {t: Lake(dashboard_home).version(t) for t in versions} == versions
