"""The served dashboard in a real browser (issue 37 §4): ``served_home`` (made by chesslab's
own commands) served on a free local port and opened in headless Chromium (Debian's
``chromium`` and ``chromium-driver``, driven by Selenium offline); each page's charts are
rendered by the bundled vega-embed, the figures of that warehouse are read back from the
rendered SVG and tables, one interaction is exercised (click a model version: the loss curves
follow) and every page is saved as a screenshot (``$CHESSLAB_SCREENSHOTS``, else a temporary
folder). Also: TensorBoard event files in a run named after each trained version, and the
MLflow file store one version was logged to.

Issue 50 (the dashboard opened as a user of TensorBoard, W&B and fishtest would): every line
chart zooms and pans, smooths and takes step or wall time as x; axes, tooltips, times and
config values read as a person reads them; legends draw lines as lines and coinciding lines
are named together; the comparison shows results, runs and data and filters by name; a
1,000-game match is paged, its crosstable readable, two matches of one event told apart, an
empty ladder said once (``matches_home``); strength over versions on the overview; no panel
twice."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboards.server import DashboardServer, make_server
from pipelines.train.tracking import ALLOW_FILE_STORE
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
    after = [a for a in labels(browser, "chart-training") if "split: " in a]   # the curves
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
             for a in labels(browser, "chart-model-losses") if "split: validation" in a]
    assert sorted(set(shown)) == sorted(loss for (loss,) in losses)
    assert "selfplay.pgn" in text(browser, "table-model-lineage")
    assert "ladder" in text(browser, "table-model-matches")
    [(ladder,)] = facts(served_home, "select round(elo, 1) from latest_ratings "
                                     "where player = 'nnue@1' and elo > 500")
    assert f"{ladder:,.1f}" in text(browser, "table-model-matches")   # 1,199.4
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


@pytest.mark.skipif(importlib.util.find_spec("mlflow") is None,
                    reason="MLflow is not installed: pip install mlflow-skinny (the test extra "
                           "installs it)")
def test_mlflow_file_store_holds_the_run_and_the_warehouse_epochs(
        served_home: Path, served_mlflow: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 50: ``train nnue ... --mlflow file:///...`` logs nnue@2 offline to an MLflow file
    store through Lightning's ``MLFlowLogger`` (chesslab opts in to the store MLflow 3.7+
    refuses by default). Read back through MLflow's own client: one finished run named after
    the model, its hyper-parameters as params (not the progress bar nor the store), and
    per-epoch metrics equal to the warehouse's ``model_metrics`` rows at step = epoch + 1."""
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv(ALLOW_FILE_STORE, "true")   # as a reader of a file store must
    client = MlflowClient(served_mlflow)
    experiment = client.get_experiment_by_name("chesslab nnue")
    assert experiment is not None
    [run] = client.search_runs([experiment.experiment_id])   # nnue@1 was not logged
    assert (run.info.run_name, run.info.status) == ("nnue@2 (nnue-fast)", "FINISHED")
    [(config,)] = facts(served_home, "select config from models where model_id = 'nnue@2'")
    stored_config = json.loads(config)
    params = run.data.params
    assert (params["learning_rate"], params["seed"], params["epochs"]) == ("0.003", "7", "2")
    assert params["optimizer"] == stored_config["optimizer"] == "adam"
    assert "progress" not in params and "mlflow" not in params
    for metric in ("val_loss", "train_loss", "learning_rate"):
        logged = [(m.step, m.value) for m in client.get_metric_history(run.info.run_id,
                                                                       f"per_epoch/{metric}")]
        stored = facts(served_home, f"select epoch + 1, {metric} from model_metrics "
                                    f"where model_id = 'nnue@2' order by epoch")
        assert len(stored) == 2 and logged == [(e, pytest.approx(v, rel=1e-12))
                                               for e, v in stored], metric
    # Lightning's own per-step validation loss passes through as well
    assert len(client.get_metric_history(run.info.run_id, "val_loss")) == 2


def tf_records(data: bytes) -> Iterator[bytes]:
    """The records of a TFRecord file (length, its CRC, the bytes, their CRC)."""
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        yield data[offset + 12: offset + 12 + length]
        offset += 12 + length + 4


# --------------------------------------------------------------------------------------------
# Issue 50
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def matches_served(matches_home: Path) -> Iterator[DashboardServer]:
    server = make_server(matches_home, port=0).start()
    try:
        yield server
    finally:
        server.shutdown()


def axis_labels(browser: Any, block: str, axis: str = "") -> list[str]:
    """The tick labels of a block's axes (``axis`` "X" or "Y": of those axes only)."""
    return list(browser.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' .role-axis')]"
        ".filter(a => (a.getAttribute('aria-label') || '').startsWith(arguments[1]))"
        ".flatMap(a => [...a.querySelectorAll('.role-axis-label text')])"
        ".map(e => e.textContent)", f"[id^='{block}']", axis))


def axis_titles(browser: Any, block: str) -> list[str]:
    return list(browser.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' .role-axis-title text')]"
        ".map(e => e.textContent)", f"[id^='{block}']"))


def wait_for(condition: Any, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def plot_element(browser: Any, block: str) -> Any:
    """A block's tallest line (or area) mark, scrolled to the middle of the window (a flat
    line, a constant learning rate, lies on the plot's edge, where a wheel misses it)."""
    found = browser.execute_script(
        "const marks = [...document.querySelectorAll(arguments[0] + ' svg .mark-line path, '"
        " + arguments[0] + ' svg .mark-area path')];"
        "const height = e => e.getBoundingClientRect().height;"
        "const e = marks.sort((a, b) => height(b) - height(a))[0];"
        "if (e) e.scrollIntoView({block: 'center'}); return e;", f"[id^='{block}']")
    assert found is not None, f"{block}: no line drawn"
    return found


def zooms(browser: Any, block: str) -> bool:
    """The mouse wheel over the block's plot changes its axes' ticks (a chart that does not
    zoom lets the page scroll instead). A live block redraws every 5 s: a mark gone stale
    under the wheel is looked up again."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    for _ in range(3):
        try:
            element = plot_element(browser, block)
            before = axis_labels(browser, block)
            ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(element), 0,
                                                     -300).perform()
        except StaleElementReferenceException:
            continue
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if axis_labels(browser, block) != before:
                return True
            time.sleep(0.1)
    return False


def test_every_line_chart_zooms_and_pans(served: DashboardServer, browser: Any,
                                         served_home: Path) -> None:
    """Issue 50: only the two loss charts zoomed. Now coverage over time, the loss curves,
    the per-epoch metrics, the comparison's curves and a match's LLR and Elo over games all
    zoom with the mouse wheel, and a drag pans."""
    from selenium.webdriver.common.action_chains import ActionChains

    [(match,)] = facts(served_home, "select tournament_id from sprt_results")
    for path, blocks in (("", ("chart-coverage-over-time", "chart-training")),
                         ("models/nnue@1", ("chart-model-losses", "chart-model-metrics")),
                         ("compare?kind=nnue&models=nnue@1&models=nnue@2",
                          ("chart-compare-curves",)),
                         (f"matches/{match}", ("chart-match-sprt", "chart-match-elo"))):
        open_page(browser, served.url + path)
        for block in blocks:
            assert zooms(browser, block), f"{path or '/'}: {block} does not zoom"
    open_page(browser, served.url + "models/nnue@1")
    plot_element(browser, "chart-model-losses")                   # scrolled into view
    svg = browser.find_element("css selector", "[id^=chart-model-losses] svg")
    before = axis_labels(browser, "chart-model-losses")
    ActionChains(browser).move_to_element(svg).click_and_hold().move_by_offset(40, 20)\
        .release().perform()
    wait_for(lambda: axis_labels(browser, "chart-model-losses") != before, "no pan")


def test_curves_smooth_and_take_step_or_wall_time(served: DashboardServer, browser: Any,
                                                  screens: Path) -> None:
    """Issue 50: TensorBoard's smoothing slider (the smoothed curve over the faded raw one)
    and x as the optimiser step or wall time, where the data has both."""
    from selenium.webdriver.support.ui import Select

    open_page(browser, served.url + "models/nnue@1")
    browser.execute_script(
        "const box = document.querySelector('[id^=chart-model-losses] input.smooth');"
        "box.value = '0.6'; box.dispatchEvent(new Event('change'));")
    wait_for(lambda: any("smoothed (0.6)" in a for a in labels(browser, "chart-model-losses")),
             "no smoothed curve")
    for choice, title in (("step", "optimiser step"), ("time", "wall time (UTC)")):
        Select(browser.find_element("css selector", "[id^=chart-model-losses] select.x"))\
            .select_by_value(choice)
        wait_for(lambda: title in axis_titles(browser, "chart-model-losses"),  # noqa: B023
                 f"x is not {title}")
    ticks = axis_labels(browser, "chart-model-losses", "X")       # times of day: 06:52:30
    assert ticks and all(re.fullmatch(r"\d\d:\d\d:\d\d(\.\d{3})?", t) for t in ticks), ticks
    shoot(browser, screens, "model-nnue1-smoothed-wall-time")


def tooltip(browser: Any, element: Any) -> str:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).move_to_element(element).perform()
    found = ""
    deadline = time.monotonic() + 5
    while not found and time.monotonic() < deadline:
        found = browser.execute_script(
            "const e = document.getElementById('vg-tooltip-element');"
            "return e && e.classList.contains('visible') ? e.innerText : ''")
        time.sleep(0.1)
    return str(found)


def test_axes_and_values_read_as_numbers_and_times(served: DashboardServer, browser: Any) -> None:
    """Issue 50: ticks as 1,000 (not 3e+2), whole epochs (no 1.5), a loss tooltip to three
    significant digits (not 0.0208845460353), timestamps as 2026-11-28 15:51:36 UTC, config
    values without JSON's quotes."""
    open_page(browser, served.url + "models/nnue@1")
    ticks = [t for block in ("chart-model-losses", "chart-model-metrics", "chart-model-ladder")
             for t in axis_labels(browser, block)]
    assert ticks and not [t for t in ticks if re.search(r"\de[+-]?\d", t)], ticks
    epochs = axis_labels(browser, "chart-model-losses", "X")
    assert {"1", "2", "3"} <= set(epochs) and not [t for t in epochs if "." in t], epochs
    point = browser.execute_script(
        "return [...document.querySelectorAll('[id^=chart-model-losses] svg .mark-symbol "
        "path[aria-label]')].find(e => /split: validation/.test(e.getAttribute('aria-label')))")
    shown = tooltip(browser, point)
    loss = re.search(r"loss\s+([\d.]+)", shown)
    assert loss and len(loss[1].lstrip("0.")) <= 3, shown
    page = browser.execute_script("return document.body.innerText")
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", page), "an ISO timestamp is shown"
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", page)
    config = text(browser, "table-model-config")
    assert '"' not in config and "adam" in config, config


def test_legends_draw_lines_and_name_coinciding_lines(served: DashboardServer,
                                                      browser: Any) -> None:
    """Issue 50: the comparison's split legend showed two black dots for a solid and a
    dashed line; depths 3 and 4, labelled from one search, drew one line over the other
    under two legend entries; the overview's losses had three titles on one axis (the
    facet's, the kind's and the axis')."""
    open_page(browser, served.url + "compare?kind=nnue&models=nnue@1&models=nnue@2")
    symbols = browser.execute_script(
        "return [...document.querySelectorAll('[id^=chart-compare-curves] "
        ".role-legend-symbol path')].map(e => [e.getAttribute('d'),"
        " e.getAttribute('stroke-dasharray') || ''])")
    assert symbols and all(re.fullmatch(r"M-?[\d.]+,0L[\d.]+,0", d) for d, _ in symbols), \
        symbols
    assert {dash for _, dash in symbols if dash not in ("", "1,0")}, symbols   # one dashed
    open_page(browser, served.url)
    legend = browser.execute_script(
        "return [...document.querySelectorAll('[id^=chart-coverage-over-time] "
        ".role-legend-label text')].map(e => e.textContent)")
    assert legend == ["3 = 4"], legend
    headers = browser.execute_script(
        "return document.querySelectorAll('[id^=chart-training] [class*=header]').length")
    assert headers == 0 and "nnue loss" in axis_titles(browser, "chart-training")


def test_the_comparison_shows_results_and_picks_versions_by_name(
        served: DashboardServer, browser: Any, served_home: Path, screens: Path) -> None:
    """Issue 50: beside the hyper-parameters that differ, each version's evaluation (Elo and
    interval, SPRT verdict, ladder rating), wall time, data-set size and source files; a
    filter box keeps the versions whose name or id holds its text."""
    [(elo, decision, ladder)] = facts(served_home, """
        select cast(payload ->> 'elo' as double), payload ->> 'sprt_decision',
            cast(payload ->> 'ladder_elo' as double)
        from model_events where event = 'evaluated' and model_id = 'nnue@1'""")
    [(rows,)] = facts(served_home, "select train_rows from model_datasets "
                                   "where model_id = 'nnue@1'")
    open_page(browser, served.url + "compare?kind=nnue&models=nnue@1&models=nnue@2")
    table = text(browser, "table-compare")
    for expected in ("match Elo (95%)", f"{elo:+.1f}", decision, "ladder Elo",
                     f"{ladder:.0f}", "wall time", "training positions", f"{rows:,}",
                     "selfplay.pgn", "Hyper-parameters that differ"):
        assert expected in table, (expected, table)
    shoot(browser, screens, "compare-results")
    box = browser.find_element("css selector", "input.filter")
    box.send_keys("fast")
    hidden = browser.execute_script(
        "return [...document.querySelectorAll('label.version')].map(e => [e.dataset.text,"
        " e.offsetParent === null])")
    assert [h for t, h in hidden if "nnue@1" in t] == [True], hidden
    assert [h for t, h in hidden if "nnue@2" in t] == [False], hidden
    box.submit()
    open_page(browser, browser.current_url)
    heads = browser.execute_script(
        "return [...document.querySelectorAll('table.compare thead a')].map(e => e.textContent)")
    assert heads == ["nnue@2"], heads


def test_a_long_match_is_paged_readable_and_told_apart(matches_served: DashboardServer,
                                                       browser: Any, screens: Path) -> None:
    """Issue 50: a 1,000-game match showed 1,000 rows; its crosstable cut the engine specs
    ("alphabeta:eval=hce,ha…"); two matches of the default event had the same heading; the
    empty Stockfish ladder said "No rows yet." twice."""
    from dashboards.tables import GAMES_PAGE
    from tests.dashboards.conftest import LONG_NAMES, MATCH_GAMES

    def rows() -> list[str]:
        return list(browser.execute_script(
            "return [...document.querySelectorAll('[id^=table-match-games] tbody tr')]"
            ".map(e => e.cells[0].textContent)"))

    open_page(browser, matches_served.url + "matches/m200")
    assert len(rows()) == GAMES_PAGE and rows()[0] == "1"
    assert f"games 1–{GAMES_PAGE} of {MATCH_GAMES:,}" in text(browser, "table-match-games")
    browser.find_element("css selector", "[id^=table-match-games] a[data-page='2']").click()
    wait_for(lambda: rows()[:1] == [str(GAMES_PAGE + 1)], "page 2 not shown")
    assert f"games {GAMES_PAGE + 1}–{2 * GAMES_PAGE} of {MATCH_GAMES:,}" in text(
        browser, "table-match-games")
    crosstable = axis_labels(browser, "chart-match-crosstable")
    assert all(any(name in label for label in crosstable) for name in LONG_NAMES), crosstable
    assert not [label for label in crosstable if "…" in label], crosstable
    shoot(browser, screens, "match-1000-games")

    def heading() -> str:
        return str(browser.execute_script(
            "return document.querySelector('h1').innerText + ' / ' + "
            "(document.querySelector('.subtitle') || {innerText: ''}).innerText"))

    first = heading()
    open_page(browser, matches_served.url + "matches/m400")
    assert heading() != first and "400 nodes" in heading(), (first, heading())
    open_page(browser, matches_served.url + "ratings")
    ladder = browser.execute_script(
        "const section = [...document.querySelectorAll('section')].find(s =>"
        " s.querySelector('h2').textContent.startsWith('Stockfish ladder'));"
        "return [...section.querySelectorAll('.empty')].filter(e => e.offsetParent !== null)"
        ".map(e => e.textContent)")
    assert len(ladder) == 1 and "ladder" in ladder[0], ladder


def test_the_overview_shows_strength_over_versions_and_each_panel_once(
        served: DashboardServer, browser: Any, served_home: Path) -> None:
    """Issue 50: a net's strength over its versions (nnue@1's match Elo against its
    baseline) beside the Elo-against-data chart on the overview; no panel twice (the labels
    per engine and depth were a chart and again a table)."""
    [(elo,)] = facts(served_home, "select cast(payload ->> 'elo' as double) from model_events "
                                  "where event = 'evaluated' and model_id = 'nnue@1'")
    open_page(browser, served.url)
    titles = browser.execute_script(
        "return [...document.querySelectorAll('.block h3')].map(e => e.textContent)")
    assert len(titles) == len(set(titles)), titles
    strength = [a for a in labels(browser, "chart-net-strength") if "model: nnue@1" in a]
    assert strength and any(abs(float(a.split("Elo: ")[1].split(";")[0].replace(
        "\u2212", "-")) - elo) < 0.1 for a in strength), strength
    assert any("train_rows" in a or "training positions" in a
               for a in labels(browser, "chart-elo-by-data"))
