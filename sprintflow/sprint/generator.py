"""One generator step: the engine changes the workspace, contained, blind to what judges it."""

from __future__ import annotations

from pathlib import Path

from sprintflow.engines import engine_env, run_engine
from sprintflow.io.containment import Bind, Containment, containment_unavailable
from sprintflow.schemas.journal import IterationJournal

__all__ = ["RAW_KEPT", "generate"]

RAW_KEPT = 20_000
"""Characters of the generator's stdout and stderr kept in the iteration journal."""


def generate(workspace: Path, contract_id: str, iteration: int, engine: str, prompt: str, timeout: float,
             hidden: tuple[str, ...] = (), discarded: tuple[str, ...] = ()) -> IterationJournal:
    """Run the generator engine once; returns the iteration journal's entry for the step.

    The engine runs contained (:mod:`~sprintflow.io.containment`): the workspace is all it
    may write, the ``hidden`` paths (the state folder, held-out evals, the tester's tests,
    the contracts) are covered for it, its writes to the ``discarded`` ones (the dependency
    folders the judge runs the code with) vanish, and nothing it starts outlives it. Its
    failure is a failed step with the raw output kept, never an exception.
    """
    env = engine_env({"SPRINTFLOW_CONTRACT_ID": contract_id, "SPRINTFLOW_ITERATION": str(iteration),
                      "SPRINTFLOW_WORKSPACE": str(workspace)})
    contain = Containment(binds=(Bind(str(workspace), str(workspace), writable=True),), hide=hidden,
                          discard=discarded)
    reply = run_engine(engine, prompt, cwd=workspace, timeout=timeout, env=env, contain=contain)
    return IterationJournal(ok=reply.ok, reason=reply.reason, exit_code=reply.exit_code,
                            could_not_start=reply.could_not_start, duration_ms=round(reply.duration_s * 1000),
                            input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                            cost_usd=reply.cost_usd, raw=reply.raw[-RAW_KEPT:], stderr=reply.stderr[-RAW_KEPT:],
                            hidden_writes=[_relative(path, workspace) for path in reply.hidden_writes],
                            uncontained=containment_unavailable())


def _relative(path: str, workspace: Path) -> str:
    resolved = workspace.resolve()
    return Path(path).relative_to(resolved).as_posix() if Path(path).is_relative_to(resolved) else path
