"""The served dashboard in a real browser (issue 37 §4): ``served_home`` (made by chesslab's
own commands) served on a free local port and opened in headless Chromium (Debian's
``chromium`` and ``chromium-driver``, driven by Selenium offline); each page's charts are
rendered by the bundled vega-embed, the figures of that warehouse are read back from the
rendered SVG and tables, one interaction is exercised (click a model version: the loss curves
follow) and every page is saved as a screenshot (``$CHESSLAB_SCREENSHOTS``, else a temporary
folder). Also: TensorBoard event files next to each trained version."""
from __future__ import annotations

import os
import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboards.server import DashboardServer, make_server
from warehouse import connect

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--window-size=1400,1000")


@pytest.fixture(scope="module")
def served(served_home: Path) -> Iterator[DashboardServer]:
    server = make_server(served_home, port=0).start()
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
        pytest.skip("needs Debian's chromium and chromium-driver (scripts/bootstrap.sh)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("CHESSLAB_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_page(browser: Any, url: str) -> None:
    """Load a page and wait until its script has filled every block."""
    browser.get(url)
    deadline = time.monotonic() + 120
    while browser.execute_script("return document.body.dataset.ready") != "true":
        assert time.monotonic() < deadline, f"{url}: blocks never filled"
        time.sleep(0.1)
    failed = browser.execute_script(
        "return [...document.querySelectorAll('[data-loaded=error]')]"
        ".map(e => e.id + ': ' + e.textContent)")
    assert failed == [], failed


def shoot(browser: Any, screens: Path, name: str) -> Path:
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, min(int(height) + 200, 8000))
    path = screens / f"{name}.png"
    browser.save_screenshot(str(path))
    browser.set_window_size(1400, 1000)
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 20_000
    return path


def labels(browser: Any, block: str) -> list[str]:
    """The aria-labels of a block's rendered marks (vega's SVG: 'field: value; ...')."""
    return list(browser.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' svg [aria-label]')]"
        ".map(e => e.getAttribute('aria-label'))", f"[id^='{block}']"))


def text(browser: Any, block: str) -> str:
    return str(browser.execute_script(
        "return document.querySelector(arguments[0]).innerText", f"[id^='{block}']"))


def facts(home: Path, sql: str) -> list[tuple[Any, ...]]:
    con = connect(home)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_overview_shows_the_warehouse_and_follows_a_click(
        served: DashboardServer, browser: Any, served_home: Path, screens: Path) -> None:
    """Positions of selfplay.pgn, the depth-4 labels, both versions' losses; clicking nnue@2's
    dot leaves only nnue@2's curves in the loss chart (a Vega-Lite selection)."""
    open_page(browser, served.url)
    [(positions,)] = facts(served_home, "select count(*) from positions")
    assert f"positions: {positions}" in "".join(labels(browser, "chart-positions-per-source"))
    assert "nnue@1" in text(browser, "table-models") and "nnue-fast" in text(browser,
                                                                              "table-models")
    before = labels(browser, "chart-training")
    assert any("nnue@1" in a for a in before if "loss" in a)
    assert any("nnue@2" in a for a in before if "loss" in a)
    shoot(browser, screens, "overview")
    dot = browser.execute_script(
        "return [...document.querySelectorAll('#chart-training svg path[aria-label]')]"
        ".find(e => /version: 2/.test(e.getAttribute('aria-label')))")
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).move_to_element(dot).click().perform()
    time.sleep(0.5)
    after = [a for a in labels(browser, "chart-training") if "loss" in a and "epoch" in a]
    assert after and all("nnue@2" in a for a in after), after
    shoot(browser, screens, "overview-nnue2-selected")


def test_a_model_page(served: DashboardServer, browser: Any, served_home: Path,
                      screens: Path) -> None:
    """nnue@1's page: its epochs' losses from model_metrics, its artifact hash, the match and
    the ladder rating it played, the source file of its data set; the log-scale box works."""
    [(sha,)] = facts(served_home, "select artifact_sha256 from models where model_id='nnue@1'")
    losses = facts(served_home, "select round(val_loss, 4) from model_metrics "
                                "where model_id = 'nnue@1' order by epoch")
    open_page(browser, served.url + "models/nnue@1")
    assert sha in text(browser, "table-model-summary")
    shown = [round(float(a.split("loss: ")[1].split(";")[0]), 4)
             for a in labels(browser, "chart-model-losses") if "split: val_loss" in a]
    assert sorted(set(shown)) == sorted(loss for (loss,) in losses)
    assert "selfplay.pgn" in text(browser, "table-model-lineage")
    assert "ladder" in text(browser, "table-model-matches")
    [(ladder,)] = facts(served_home, "select round(elo, 1) from latest_ratings "
                                     "where player = 'nnue@1' and elo > 500")
    assert f"{ladder}" in text(browser, "table-model-matches")
    axis = browser.execute_script(
        "return [...document.querySelectorAll('[id^=chart-model-ladder] .role-axis-label text')]"
        ".map(e => e.textContent)")
    ticks = sorted(float(t.replace(",", "")) for t in axis if t.replace(",", "").isdigit())
    assert ticks[-1] - ticks[0] >= 100, ticks         # not 1198-1200 for one point
    shoot(browser, screens, "model-nnue1")
    browser.find_element("css selector", "[id^=chart-model-losses] input.log").click()
    deadline = time.monotonic() + 30
    while not browser.execute_script(
            "return document.querySelector('[id^=chart-model-losses] svg') !== null"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    shoot(browser, screens, "model-nnue1-log")


def test_compare_match_and_ratings_pages(served: DashboardServer, browser: Any,
                                         served_home: Path, screens: Path) -> None:
    """Compare: both versions' curves and their differing seed highlighted. The SPRT match:
    its LLR (from the games, as chesslab sprt counts them) against the bounds, the pentanomial
    counts, the crosstable and the games with PGN links. Ratings: a table per pool, named
    by event and player spec, never a hex tournament id."""
    open_page(browser, served.url + "compare?kind=nnue&models=nnue@1&models=nnue@2")
    diff = browser.execute_script(
        "return [...document.querySelectorAll('tr.diff th')].map(e => e.textContent)")
    assert {"seed", "name", "epochs"} <= set(diff) and "batch_size" not in diff
    shoot(browser, screens, "compare-nnue")

    [(match, llr, counts)] = facts(served_home, "select tournament_id, llr, counts "
                                                "from sprt_results")
    open_page(browser, served.url + f"matches/{match}")
    shown = [float(a.split("LLR: ")[1].split(";")[0].replace("\u2212", "-"))
             for a in labels(browser, "chart-match-sprt") if "LLR: " in a]
    assert {0.0, round(llr, 3)} <= {round(x, 3) for x in shown}, shown
    pairs = labels(browser, "chart-match-pentanomial")
    assert [int(a.split("pairs: ")[1].split(";")[0]) for a in pairs if "pairs: " in a] == counts
    assert text(browser, "table-match-games").count("pgn") >= 4
    assert browser.execute_script("return document.body.dataset.live") == "false"
    shoot(browser, screens, "match-sprt")

    open_page(browser, served.url + "ratings")
    page = browser.execute_script("return document.body.innerText")
    assert "chesslab evaluate nnue@1: ladder" in page and "stockfish@1350" in page
    assert match not in page
    shoot(browser, screens, "ratings")


def tensorboard_events(home: Path, run: str) -> list[Any]:
    from tensorboardX.proto.event_pb2 import Event

    files = sorted((home / "tensorboard" / run).glob("events.out.tfevents.*"))
    assert files, f"no event files in {home / 'tensorboard'}: {os.listdir(home / 'tensorboard')}"
    return [Event.FromString(record) for path in files for record in tf_records(path.read_bytes())]


def test_tensorboard_event_files_hold_the_warehouse_epochs(served_home: Path) -> None:
    """Issue 37 §3: each version's run has TensorBoard event files whose ``epoch/val_loss``
    are the warehouse's, and whose Lightning ``val_loss`` (Lightning's own averaging)
    agrees. Issue 50: the run is named after the model (``nnue@1 (nnue-tiny)``, not
    ``nnue/1/tensorboard``) in ``<home>/tensorboard``."""
    for version, name in ((1, "nnue-tiny"), (2, "nnue-fast")):
        scalars: dict[str, dict[int, float]] = {}
        for event in tensorboard_events(served_home, f"nnue@{version} ({name})"):
            for value in event.summary.value:
                scalars.setdefault(value.tag, {})[event.step] = value.simple_value
        stored = facts(served_home, f"select epoch + 1, val_loss, step from model_metrics "
                                    f"where model_id = 'nnue@{version}' order by epoch")
        assert {e: round(v, 5) for e, v in scalars["epoch/val_loss"].items()} == {
            e: round(v, 5) for e, v, _ in stored}
        lightning = scalars["val_loss"]
        assert [round(lightning[s - 1] if s - 1 in lightning else lightning[s], 4)
                for _, _, s in stored] == [round(v, 4) for _, v, _ in stored]


def test_tensorboard_hparams_tab_holds_the_config(served_home: Path) -> None:
    """Issue 50: TensorBoard's HParams tab shows each run's hyper-parameters (nnue@2's
    learning rate 0.003 and seed 7) with the epoch metrics as the columns to compare."""
    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData

    found: dict[str, Any] = {}
    for event in tensorboard_events(served_home, "nnue@2 (nnue-fast)"):
        for value in event.summary.value:
            if value.metadata.plugin_data.plugin_name == "hparams":
                data = HParamsPluginData.FromString(value.metadata.plugin_data.content)
                found[data.WhichOneof("data")] = getattr(data, data.WhichOneof("data"))
    hparams = found["session_start_info"].hparams
    assert hparams["learning_rate"].number_value == 0.003
    assert hparams["seed"].number_value == 7 and hparams["optimizer"].string_value == "adam"
    assert "progress" not in hparams and "mlflow" not in hparams
    assert [m.name.tag for m in found["experiment"].metric_infos] == ["epoch/val_loss",
                                                                      "epoch/train_loss"]


def tf_records(data: bytes) -> Iterator[bytes]:
    """The records of a TFRecord file (length, its CRC, the bytes, their CRC)."""
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        yield data[offset + 12: offset + 12 + length]
        offset += 12 + length + 4
