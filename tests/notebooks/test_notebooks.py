"""The analyst notebooks run top to bottom against a realistic generated history and draw their charts."""

import ast
import asyncio
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from synthetic_history import WORKSPACE_VARIABLE, demo_workspace

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))
LOGIC = (ast.For, ast.While, ast.If, ast.IfExp, ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp,
         ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Try, ast.With, ast.BinOp, ast.Compare, ast.BoolOp)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """Every notebook, executed concurrently (kernels start in parallel) against one demo workspace."""
    workspace = demo_workspace(tmp_path_factory.mktemp("demo"), evaluations=2000)
    books = {path.name: nbformat.read(path, as_version=4) for path in NOTEBOOKS}

    async def run_all():
        await asyncio.gather(*(NotebookClient(book, timeout=180, kernel_name="python3",
                                              resources={"metadata": {"path": str(NOTEBOOKS[0].parent)}}
                                              ).async_execute()
                               for book in books.values()))

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WORKSPACE_VARIABLE, str(workspace))
        patch.delenv("SPRINTFLOW_HISTORY", raising=False)
        asyncio.run(run_all())
    return books


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
