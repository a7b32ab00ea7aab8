"""The analyst notebooks run top to bottom against a realistic generated history and draw their charts,
and refuse to chart made-up data when nobody asked for it."""

import ast
import asyncio
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from synthetic_history import DEMO_VARIABLE, WORKSPACE_VARIABLE

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
LOGIC = (ast.For, ast.While, ast.If, ast.IfExp, ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
         ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Try, ast.With, ast.BinOp, ast.Compare, ast.BoolOp)


def _client(book) -> NotebookClient:
    return NotebookClient(book, timeout=180, kernel_name="python3",
                          resources={"metadata": {"path": str(NOTEBOOKS[0].parent)}})


@pytest.fixture(scope="module")
def executed():
    """Every notebook, executed concurrently (kernels start in parallel) on the demo history it was asked for."""
    books = {path.name: nbformat.read(path, as_version=4) for path in NOTEBOOKS}

    async def run_all():
        await asyncio.gather(*(_client(book).async_execute() for book in books.values()))

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DEMO_VARIABLE, "1")
        patch.delenv(WORKSPACE_VARIABLE, raising=False)
        patch.delenv("SPRINTFLOW_HISTORY", raising=False)
        asyncio.run(run_all())
    return books


def test_without_a_workspace_or_the_demo_the_first_cell_stops_and_says_what_to_set(monkeypatch):
    monkeypatch.delenv(WORKSPACE_VARIABLE, raising=False)
    monkeypatch.delenv(DEMO_VARIABLE, raising=False)
    book = nbformat.read(NOTEBOOKS[0], as_version=4)
    with pytest.raises(CellExecutionError) as stopped:
        _client(book).execute()
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    [error] = [o for o in code[0].outputs if o.output_type == "error"]
    assert error.ename == "NoWorkspace" and error.evalue.startswith("no history to read: set SPRINTFLOW_WORKSPACE=")
    assert "SPRINTFLOW_DEMO=1" in error.evalue and "SPRINTFLOW_DEMO=1" in str(stopped.value)
    assert len(error.traceback) == 1  # one line, no stack of frames to dig through
    assert not any(cell.outputs for cell in code[1:])  # nothing was drawn from made-up data


def test_a_workspace_that_is_not_a_folder_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv(WORKSPACE_VARIABLE, str(tmp_path / "nowhere"))
    book = nbformat.read(NOTEBOOKS[0], as_version=4)
    with pytest.raises(CellExecutionError, match="nowhere is not a folder"):
        _client(book).execute()


def test_the_two_notebooks_the_analysts_asked_for_exist():
    assert {p.name for p in NOTEBOOKS} >= {"pass_rate_trends.ipynb", "coverage_and_flakiness.ipynb"}


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_cells_only_call_functions(name):
    book = nbformat.read(Path(NOTEBOOKS[0].parent, name), as_version=4)
    for cell in book.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.startswith("%"))
        assert not [type(node).__name__ for node in ast.walk(ast.parse(source)) if isinstance(node, LOGIC)], \
            f"{name}: logic belongs in sprintflow.reporting.analytics, not in a cell:\n{cell.source}"


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_every_cell_runs_and_every_chart_draws(executed, name):
    cells = [c for c in executed[name].cells if c.cell_type == "code"]
    for cell in cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
        if "charts." in cell.source and cell.source.splitlines()[-1].startswith("charts."):
            images = [o for o in cell.outputs if "image/png" in o.get("data", {})]
            assert images and len(images[0]["data"]["image/png"]) > 10_000, cell.source
    tables = [o for c in cells for o in c.outputs if "text/html" in o.get("data", {})]
    assert tables, f"{name} shows no table"


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_the_demo_says_it_is_synthetic_before_any_number(executed, name):
    first = next(c for c in executed[name].cells if c.cell_type == "code")
    said = "".join(o.get("text", "") for o in first.outputs if o.output_type == "stream")
    assert "SYNTHETIC DEMO DATA (SPRINTFLOW_DEMO=1): every number and chart below is made up" in said, said
