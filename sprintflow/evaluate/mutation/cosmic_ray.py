"""pytest's mutants: cosmic-ray, through its runner in ``sandbox/scripts/mutate_python.py``, which
judges the mutants in one forked pytest process (``sandbox/scripts/pytest_plugin/``); a mutant any
judging command fails is killed."""

from __future__ import annotations

import json
import secrets
import shlex

from pydantic import TypeAdapter

from sprintflow.io.confine import read_confined
from sprintflow.schemas.evaluation import MutantRecord

from .tools import FOLDER, MAX_REPORT_BYTES, MutationTool, ToolRun, register

__all__ = ["CosmicRay"]


@register("pytest")
class CosmicRay(MutationTool):
    name = "cosmic-ray"
    suffixes = (".py",)

    def command(self, run: ToolRun) -> str:
        settings = run.settings
        job = {"files": {c.path: [list(r) for r in c.lines] for c in run.changes},
               "commands": run.commands, "maxMutants": settings.max_mutants,
               "budget": settings.budget, "mutantTimeout": run.mutant_timeout, "seed": secrets.randbits(32),
               "report": f"{FOLDER}/report.json"}
        run.job_file("job.json").write_text(json.dumps(job), encoding="utf-8")
        runner = shlex.quote(run.executor.script("mutate_python.py"))
        return f"{shlex.quote(run.executor.python)} {runner} {FOLDER}/job.json"

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        data = json.loads(read_confined(run.layer, f"{FOLDER}/report.json", MAX_REPORT_BYTES))
        return str(data["tool"]), TypeAdapter(list[MutantRecord]).validate_python(data["mutants"])
