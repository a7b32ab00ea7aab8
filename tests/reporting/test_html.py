"""The HTML report in a real browser: headless Debian Chromium, driven by Playwright, offline."""

import os
import shutil

import pytest
from synthetic_history import demo_workspace

from sprintflow.history.sources import load_history
from sprintflow.reporting.html import SECTIONS
from sprintflow.reporting.report import build_report, write_report

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium keeps reaching for Google's hosts on a machine with no network.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def sync_playwright():
    """Skip on a laptop without Chromium or Playwright; in CI (CI set) they are required."""
    missing = None if shutil.which(CHROMIUM) else f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = missing or "the playwright package is not installed (pip install -e '.[dev]')"
    if missing and os.environ.get("CI"):
        pytest.fail(missing)
    if missing:
        pytest.skip(missing)
    return sync_playwright


def test_every_chart_draws_in_chromium_without_touching_the_network(sync_playwright, tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = demo_workspace(tmp_path / "demo", evaluations=300)
    page_path = write_report(build_report(load_history(workspace)), tmp_path / "out")["html"]
    requests = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda request: requests.append(request.url))
            page.goto(page_path.as_uri(), wait_until="load")
            charts = page.evaluate("""() => [...document.querySelectorAll('figure.chart > svg')].map(svg => {
                const box = svg.getBoundingClientRect();
                const marks = [...svg.querySelectorAll('path, rect, use')].filter(e => {
                    const b = e.getBBox(); return b.width > 0 || b.height > 0; });
                const texts = [...svg.querySelectorAll('text')].map(t => t.textContent).join(' ');
                return {width: box.width, height: box.height, marks: marks.length, texts};
            })""")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert len(charts) == sum(len(s.charts) for s in SECTIONS)  # the demo history feeds every chart
    for chart in charts:
        assert chart["width"] > 300 and chart["height"] > 100, chart
        assert chart["marks"] > 10, chart  # axes, ticks, lines, bars: it drew
    assert any("Is the agent getting better" in c["texts"] for c in charts)
    assert requests == [page_path.as_uri()]
    assert (tmp_path / "report.png").stat().st_size > 50_000
