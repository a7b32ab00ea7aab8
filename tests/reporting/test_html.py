"""The interactive report in a real browser: headless Debian Chromium, driven by Playwright, offline.

Each test opens the file from disk as an analyst would, works the filters and
the clicks, and reads the numbers the page shows.
"""

import json
import os
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from synthetic_history import demo_workspace

from sprintflow.history.dataset import EVALS, append_rows
from sprintflow.history.records import eval_rows
from sprintflow.history.sources import load_history
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.reporting.explore.page import DAILY_CUBES, SUMMED
from sprintflow.reporting.report import build_report, write_report
from sprintflow.schemas import EvalResult

CHROMIUM = "/usr/bin/chromium"
# Without these, Chromium keeps reaching for Google's hosts on a machine with no network.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
HEADLINE = ("() => [...document.querySelectorAll('#charts svg text')].map(t => t.textContent)"
            ".find(t => t.includes(' passing: '))")
TABLE_TEXTS = "() => [...document.querySelectorAll('#charts svg text')].map(t => t.textContent)"


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


def _eval_result(eval_id: str, contract_id: str, iteration: int, at: datetime) -> EvalResult:
    """A failing EvalResult as the evaluator writes it: feedback, a unit-test strategy with diagnostics."""
    return EvalResult.model_validate({
        "evalId": eval_id, "contractId": contract_id, "specId": "spec-1", "iteration": iteration,
        "timestamp": at.isoformat().replace("+00:00", "Z"), "overallResult": "fail",
        "score": {"criteriaTotal": 1, "criteriaPassed": 0, "criteriaFailed": 1, "criteriaSkipped": 0,
                  "requiredPassed": 0, "requiredFailed": 1, "requiredTotal": 1},
        "strategyResults": [{"strategy": "unit-test", "required": True, "result": "fail", "exitCode": 1,
                             "details": "`pytest` exited 1 with 1 error(s).", "diagnostics": [
                                 {"tool": "junit", "message": "test_rejects_empty_title: assert 201 == 400",
                                  "file": "tests/test_api.py", "line": 54,
                                  "hint": "The API accepted an empty title; validate it and answer 400."}]}],
        "criteriaResults": [{"criterionId": "sc-1-1", "description": "Empty titles are rejected",
                             "required": True, "result": "fail", "evidence": "unit-test: 1 failed",
                             "feedback": "POST /todos with an empty title returned 201"}],
        "generatorFeedback": [{"priority": "critical", "category": "bug", "file": "src/todo_api/server.py",
                               "line": 28, "description": "Empty titles are stored instead of rejected",
                               "expected": "400 with an error message"}],
        "summary": "FAIL: 0/1 criteria passed; unit-test failed (1 test).",
    })


@pytest.fixture(scope="module")
def week_workspace(tmp_path_factory):
    """A week of real-shaped history: two engines, EvalResult files for the newest evaluations."""
    workspace = tmp_path_factory.mktemp("week")
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    layout = WorkspaceLayout(workspace)
    for n in range(28):
        at = start + timedelta(hours=6 * n)
        engine = "claude" if n % 2 else "codex"
        result = _eval_result(f"eval-sprint-{n // 3}-{n % 3 + 1}", f"sprint-{n // 3}", n % 3 + 1, at)
        passed = engine == "claude" and n % 4 == 1
        if passed:
            result = result.model_copy(update={"overall_result": "pass"})
        layout.eval_file(result.eval_id).parent.mkdir(parents=True, exist_ok=True)
        layout.eval_file(result.eval_id).write_text(result.model_dump_json(by_alias=True))
        rows = eval_rows(result, workspace_hash=f"h{n // 2}", git_sha=None, executor="docker", image=None,
                         run_id=f"r{n}", engine=engine, tokens=1000 + n, cost=0.01 * (n + 1),
                         workspace=str(workspace))
        append_rows(layout.history_dir, EVALS, rows)
    return workspace


def _open(playwright, path, requests):
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_selector("body[data-ready]", timeout=60_000)
    assert page.evaluate("document.body.dataset.ready") == "yes", page.inner_text("#charts")
    return browser, page, errors


def _settle(page):
    page.wait_for_timeout(400)  # Vega re-runs its dataflow asynchronously after an input event


def test_filters_change_the_numbers_and_clicks_open_evaluations(sync_playwright, tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = demo_workspace(tmp_path / "demo", evaluations=600)
    page_path = write_report(build_report(load_history(workspace), workspace=str(workspace)), tmp_path / "out")["html"]
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page, errors = _open(playwright, page_path, requests)
        try:
            everything = page.evaluate(HEADLINE)
            strategies_before = page.evaluate(TABLE_TEXTS)
            page.select_option("select[name=f_engine]", "codex")
            _settle(page)
            codex = page.evaluate(HEADLINE)
            page.select_option("select[name=f_engine]", "claude")
            _settle(page)
            claude = page.evaluate(HEADLINE)
            assert everything.startswith("evaluations passing: ") and len({everything, codex, claude}) == 3
            assert page.evaluate(TABLE_TEXTS) != strategies_before  # the tables follow too

            page.select_option("select[name=f_engine]", "(all)")
            page.select_option("select[name=f_strategy]", "unit-test")
            _settle(page)
            assert page.evaluate(HEADLINE).startswith("strategy unit-test passing: ")
            page.select_option("select[name=f_strategy]", "(all)")
            _settle(page)
            assert page.evaluate(HEADLINE) == everything

            # Click a week of the trend: its evaluations are listed, and one opens.
            point = page.locator('#charts path[aria-roledescription="point"][aria-label*="; decided: "]').nth(3)
            point.click()
            page.wait_for_selector("#drill:not([hidden]) tbody tr", timeout=10_000)
            heading = page.inner_text("#drill h2")
            listed = page.locator("#drill tbody tr").count()
            assert heading.startswith("Evaluations behind the week from 2026-") and listed > 0
            page.locator("#drill tbody tr").first.click()
            assert page.locator("dialog#evaluation[open]").count() == 1
            assert "eval-sprint-" in page.inner_text("dialog#evaluation h2")
            page.click("dialog#evaluation button")

            # A bar: the strategy picked lists evaluations with that strategy's own result.
            # The row's click target lies over the bar (a 0 % bar has no width to click): the last of the two.
            page.locator('#charts path[aria-roledescription="bar"][aria-label*="strategy: typecheck"]'
                         '[aria-label*="pass rate [95%]"]').last.click()
            page.wait_for_function("document.querySelector('#drill h2').textContent.includes('typecheck')")
            assert page.locator("#drill tbody tr").count() > 0

            # Every other chart of evaluations takes the click too, each with what it stands for.
            clicks = {
                '[aria-roledescription="point"][aria-label*="strategy: unit-test"][aria-label*="from: "]':
                    "Evaluations behind strategy unit-test in the week from 2026-",
                '[aria-roledescription="point"][aria-label*="measure: per sprint"][aria-label*="value: $"]':
                    "Evaluations behind the week from 2026-",
                '[aria-roledescription="point"][aria-label*="measure: per passed criterion"]'
                '[aria-label*="value: "]:not([aria-label*="$"])': "Evaluations behind the week from 2026-",
                '[aria-roledescription="bar"][aria-label*="regressions: "][aria-label*="evaluations: "]':
                    "Evaluations behind the week from 2026-",
                '[aria-roledescription="bar"][aria-label*="strategy: "][aria-label*="flip rate [95%]"]':
                    "Evaluations behind strategy ",
                '[aria-roledescription="bar"][aria-label*="method: unit-test"][aria-label*="skipped: "]':
                    "Evaluations behind criteria verified by unit-test",
            }
            for target, heading in clicks.items():
                page.locator(f"#charts path{target}").last.click()
                page.wait_for_function(f"document.querySelector('#drill h2').textContent.startsWith({heading!r})")
                assert page.locator("#drill tbody tr").count() > 0, target

            # The charts that are not of evaluations list the page's rows behind the click instead.
            rows = {
                '[aria-roledescription="bar"][aria-label*="test: "][aria-label*="flip rate [95%]"]':
                    ("Re-runs of test ", "re-runs"),
                '[aria-roledescription="point"][aria-label*="; event: "][aria-label*="bugs: "]':
                    ("Bug events in the week from 2026-", "reopened"),
                '[aria-roledescription="point"][aria-label*="measure: score (pass^k)"]': ("Scorer run of ", "pass@k"),
            }
            for target, (heading, column) in rows.items():
                page.locator(f"#charts path{target}").last.click()
                page.wait_for_function(f"document.querySelector('#rows h2').textContent.startsWith({heading!r})")
                assert page.locator("#drill").is_hidden() and column in page.inner_text("#rows thead"), target
                assert page.locator("#rows tbody tr").count() > 0, target
                assert page.inner_text("#rows .count").split()[0] == str(page.locator("#rows tbody tr").count())
            scorer_run = page.inner_text("#rows tbody tr")
            assert "%" in scorer_run and " @ " in scorer_run  # the run's skill @ prompt and its rates
            page.locator('#charts path[aria-roledescription="point"][aria-label*="measure: score (pass^k)"]').last \
                .dblclick()
            _settle(page)
            assert page.locator("#rows").is_hidden() and page.locator("#drill").is_hidden()
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert not errors
    assert requests == [page_path.as_uri()]  # nothing left the page
    assert (tmp_path / "report.png").stat().st_size > 100_000


def test_a_week_of_data_shows_days_with_visible_intervals_and_evalresult_details(sync_playwright, tmp_path,
                                                                                   week_workspace, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    report = build_report(load_history(week_workspace), workspace=str(week_workspace))
    page_path = write_report(report, tmp_path / "out")["html"]
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page, errors = _open(playwright, page_path, requests)
        try:
            assert page.evaluate("window.sprintflowView.signal('period_unit')") == "day"
            points = page.eval_on_selector_all('#charts path[aria-roledescription="point"][aria-label*="; decided: "]',
                                               "els => els.map(e => e.getAttribute('aria-label'))")
            assert len(points) == 8  # 28 evaluations over eight calendar days: a point per day, not per week
            assert points[0].startswith("period: Mar 02, 2026")
            # Every point has an interval drawn around it, even with four evaluations a day.
            rules = page.eval_on_selector_all('#charts g.mark-rule path, #charts g.mark-rule line',
                                              "els => els.filter(e => e.getBBox().height > 1).length")
            assert rules >= 8
            bands = page.eval_on_selector_all('#charts g.mark-area path', "els => els.map(e => e.getBBox().height)")
            assert bands and max(bands) > 20
            # Narrowing the dates changes the numbers shown.
            before = page.evaluate(HEADLINE)
            page.fill("input[name=f_from]", "2026-03-05")
            page.dispatch_event("input[name=f_from]", "input")
            _settle(page)
            assert page.evaluate(HEADLINE) != before
            # The last evaluation opens with its EvalResult: summary, feedback and diagnostics.
            page.locator('#charts path[aria-roledescription="point"][aria-label*="; decided: "]').last.click()
            page.wait_for_selector("#drill tbody tr")
            page.locator("#drill tbody tr").first.click()
            dialog = page.inner_text("dialog#evaluation")
            assert "FAIL: 0/1 criteria passed" in dialog
            assert "Empty titles are stored instead of rejected" in dialog and "src/todo_api/server.py:28" in dialog
            assert "tests/test_api.py:54" in dialog and "validate it and answer 400" in dialog
            page.click("dialog#evaluation button")
            # Dates with no data at all: every view stays drawn, with nothing claimed.
            page.fill("input[name=f_from]", "2026-04-01")
            page.dispatch_event("input[name=f_from]", "input")
            page.fill("input[name=f_to]", "2026-04-30")
            page.dispatch_event("input[name=f_to]", "input")
            _settle(page)
            assert page.evaluate(HEADLINE).startswith("evaluations passing: n/a of 0 decided")
            size = page.evaluate("[...document.querySelectorAll('#charts svg')].map(s => +s.getAttribute('width'))")
            assert size and all(0 < width < 5000 for width in size)
        finally:
            browser.close()
    assert not errors
    assert requests == [page_path.as_uri()]


def test_the_page_is_one_file_without_a_single_network_reference(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = demo_workspace(tmp_path / "demo", evaluations=300)
    text = write_report(build_report(load_history(workspace), workspace=str(workspace)),
                        tmp_path / "out")["html"].read_text()
    assert "<script src" not in text and "<link" not in text
    spec = json.loads(text.split('id="sprintflow-spec">', 1)[1].split("</script>", 1)[0])
    assert set(spec["datasets"]) == {"outcomes", "greens", "activity", "flips", "coverage", "bugs", "scores"}
    assert "url" not in json.dumps({k: v for k, v in spec.items() if k != "datasets"})


def test_a_page_over_its_budget_drops_the_oldest_sampled_evaluations_not_the_numbers(tmp_path, monkeypatch):
    from sprintflow.reporting import html as page_module

    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = demo_workspace(tmp_path / "demo", evaluations=300)
    report = build_report(load_history(workspace), workspace=str(workspace))
    full = page_module.render_html(report)
    embedded = json.loads(full.split('id="sprintflow-evaluations">', 1)[1].split("</script>", 1)[0])
    assert len(embedded) == len(report.page.evaluations) > 100
    monkeypatch.setattr(page_module, "PAGE_LIMIT", len(full.encode()) - 40_000)
    trimmed = page_module.render_html(report)
    kept = json.loads(trimmed.split('id="sprintflow-evaluations">', 1)[1].split("</script>", 1)[0])
    assert 0 < len(kept) < len(embedded) and kept == embedded[:len(kept)]  # the newest stay
    assert len(trimmed.encode()) <= page_module.PAGE_LIMIT
    assert '"trimmed":true' in trimmed and trimmed.split('id="sprintflow-spec">')[1].split("</script>")[0] == \
        full.split('id="sprintflow-spec">')[1].split("</script>")[0]  # every cube, and so every number, intact


def test_search_finds_contracts_criteria_and_feedback_and_says_what_it_searched(sync_playwright, tmp_path,
                                                                                 week_workspace, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    report = build_report(load_history(week_workspace), workspace=str(week_workspace))
    page_path = write_report(report, tmp_path / "out")["html"]
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser, page, errors = _open(playwright, page_path, requests)
        try:
            # Feedback text of the evaluations the page carries details for: a match opens its evaluation.
            detailed = len(report.page.details)
            assert detailed >= 20
            page.fill("#search-box", "empty titles are STORED")
            hits = page.locator("#search-results li")
            assert hits.count() == detailed  # each detailed evaluation has that feedback item once
            count = page.inner_text("#search .count")
            assert count.startswith(f"{detailed} matches in ")
            assert f"feedback of {detailed} evaluations with details (of 28 sampled)" in count
            hits.first.click()
            assert "Empty titles are stored instead of rejected" in page.inner_text("dialog#evaluation")
            page.click("dialog#evaluation button")
            # A contract picks the contract filter, and every view follows it.
            before = page.evaluate(HEADLINE)
            page.fill("#search-box", "sprint-3")
            assert page.inner_text("#search-results li >> nth=0") == "contract sprint-3"
            page.locator("#search-results li").first.click()
            _settle(page)
            assert page.evaluate("window.sprintflowView.signal('f_contract')") == "sprint-3"
            assert page.evaluate(HEADLINE) != before
            page.fill("#search-box", "sc-1-1")
            assert "criterion sc-1-1" in page.inner_text("#search-results")
            page.fill("#search-box", "nothing-like-this")
            assert page.inner_text("#search .count").startswith("0 matches in ")
        finally:
            browser.close()
    assert not errors
    assert requests == [page_path.as_uri()]


def test_a_capped_flaky_test_view_says_how_many_tests_it_leaves_out(tmp_path, monkeypatch):
    from sprintflow.reporting.explore import page as page_data

    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = demo_workspace(tmp_path / "demo", evaluations=300)
    whole = build_report(load_history(workspace), workspace=str(workspace)).page
    retested = whole.totals["re-run tests"]
    assert retested > 2 and whole.totals["tests shown"] == retested
    monkeypatch.setattr(page_data, "TEST_LIMIT", 2)
    report = build_report(load_history(workspace), workspace=str(workspace))
    cube = report.page.flips
    kept = cube.loc[cube["level"] == "test", "name"].unique()
    most = whole.flips[whole.flips["level"] == "test"].groupby("name")["flips"].sum().nlargest(2).index
    assert sorted(kept) == sorted(most)  # the two tests that flipped most, every one of their rows
    strategies = [c[c["level"] == "strategy"].reset_index(drop=True) for c in (cube, whole.flips)]
    assert strategies[0].equals(strategies[1])
    text = write_report(report, tmp_path / "out")["html"].read_text()
    assert (f"The flaky-test view keeps the 2 tests that flipped most of the {retested:,} re-run on unchanged "
            f"content ({retested - 2:,} left out; csv/flaky-tests.csv has them all).") in text


def test_flips_follow_time_not_the_order_rows_were_recorded_in(tmp_path, monkeypatch):
    # One strategy's runs on hash "h", recorded out of order: in time pass (01-01), pass, fail (a tie on 01-02,
    # broken by the order recorded), fail (01-03), fail (no time: last). One flip in four comparisons, on 01-02;
    # the first run in time (01-01) is no comparison, and a run without a time is on no day of the page.
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    runs = [("e2e", "h", "2026-01-03", "fail"), ("e2e", "h", "2026-01-01", "pass"), ("e2e", "h", None, "fail"),
            ("e2e", "h", "2026-01-02", "pass"), ("e2e", "h", "2026-01-02", "fail"), ("e2e", "once", "2026-01-01",
            "fail"), ("lint", "h", "2026-01-02", "pass"), ("lint", "h", "2026-01-01", "pass")]
    append_rows(WorkspaceLayout(tmp_path).history_dir, EVALS, [
        {"kind": "strategy", "name": name, "workspace_hash": hash_, "result": result, "cached": False,
         "contract_id": "c", "executor": "local", "timestamp": at and datetime.fromisoformat(at + "T00:00:00+00:00")}
        for name, hash_, at, result in runs])
    report = build_report(load_history(tmp_path), workspace=str(tmp_path))
    flaky = report.tables["flaky-strategies"]
    assert flaky[["strategy", "repeated_hashes", "flaky_hashes", "runs", "flips"]].values.tolist() == [
        ["e2e", 1, 1, 5, 1], ["lint", 1, 0, 2, 0]]
    cube = report.page.flips
    assert cube[["day", "name", "comparisons", "flips"]].values.tolist() == [
        ["2026-01-02", "e2e", 2, 1], ["2026-01-02", "lint", 1, 0], ["2026-01-03", "e2e", 1, 0]]


def _nightly_workspace(root, days: int):
    """Nightly sprints: two contracts evaluated every day, the shape whose cubes grow with the days."""
    layout, rows = WorkspaceLayout(root), []
    start = datetime(2026, 1, 1, 2, tzinfo=UTC)
    for day in range(days):
        for contract in range(2):
            result = _eval_result(f"eval-{day}-{contract}", f"nightly-{contract}", 1, start + timedelta(days=day))
            if (day + contract) % 3:
                result = result.model_copy(update={"overall_result": "pass"})
            rows += (eval_rows(result, workspace_hash=f"h{day}", git_sha=None, executor="local", image=None,
                                  run_id=f"r{day}-{contract}", engine="codex" if day % 2 else "claude",
                                  tokens=1000, cost=0.01, workspace=str(root)))
    append_rows(layout.history_dir, EVALS, rows)
    return root


def _week(day: str) -> str:
    """The first day of ``day``'s week, or of its month when the month starts later in the week."""
    at = datetime.fromisoformat(day).date()
    return str(max(at - timedelta(days=at.weekday()), at.replace(day=1)))


def _sums(rows: list[dict], period) -> dict:
    """A cube's counts summed per period (``period`` of the day) and per every other key."""
    totals: dict = {}
    for row in rows:
        key = (period(row["day"]), *(value for k, value in row.items() if k not in SUMMED and k != "day"))
        counts = [value for k, value in row.items() if k in SUMMED]
        totals[key] = [round(a + b, 6) for a, b in zip(totals.get(key, [0] * len(counts)), counts, strict=True)]
    return totals


def _cubes(page: str) -> tuple[int, dict]:
    """The page's cubes, and the bytes they take in it."""
    cubes = json.loads(page.split('id="sprintflow-spec">', 1)[1].split("</script>", 1)[0])["datasets"]
    return len(json.dumps(cubes, separators=(",", ":"), ensure_ascii=False)), cubes


def test_cubes_over_their_budget_merge_old_days_by_week_and_every_week_and_month_still_sums_exactly(tmp_path,
                                                                                                     monkeypatch):
    from sprintflow.reporting import html as page_module

    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    workspace = _nightly_workspace(tmp_path, days=120)
    report = build_report(load_history(workspace), workspace=str(workspace))
    full = page_module.render_html(report)
    size, by_day = _cubes(full)
    monkeypatch.setattr(page_module, "CUBE_LIMIT", size * 3 // 4)
    monkeypatch.setattr(page_module, "DAYS_KEPT", (30, 0))
    merged_page = page_module.render_html(report)
    merged_size, merged = _cubes(merged_page)
    kept_from = str((datetime.fromisoformat(report.page.last_day) - timedelta(days=29)).date())
    assert f"Before {kept_from} the counts are by week" in merged_page and "counts are by week" not in full
    assert merged_size <= page_module.CUBE_LIMIT and merged["scores"] == by_day["scores"]
    assert all(by_day[name] for name in ("outcomes", "greens", "activity", "coverage"))
    for name in DAILY_CUBES:
        assert _sums(merged[name], _week) == _sums(by_day[name], _week), name
        assert _sums(merged[name], lambda day: day[:7]) == _sums(by_day[name], lambda day: day[:7]), name
        assert [row for row in merged[name] if row["day"] >= kept_from] == \
            [row for row in by_day[name] if row["day"] >= kept_from], name  # the recent days as they were
        old_days = {row["day"] for row in merged[name] if row["day"] < kept_from}
        assert all(day in (_week(day), report.page.first_day) for day in old_days), name
