"""Plan an evaluation: the contract, the config and the strategies to run, decided before anything runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sprintflow.errors import WorkspaceError
from sprintflow.evaluate.config import load_project_config
from sprintflow.judge.caches import ToolCache, tool_cache
from sprintflow.judge.tree import JudgedTree
from sprintflow.sandbox.executors import Executor
from sprintflow.schemas import (
    ProjectConfig,
    SprintContract,
    StrategyConfig,
    StrategyType,
    VerificationMethod,
    load_document,
    parse_strategy,
)
from sprintflow.schemas.strategies import MutationSettings

from .mutation import MutationJob
from .outcomes import Reference
from .strategies import STRATEGIES, Strategy, StrategyRun, strategy_for
from .view import EvaluationView

__all__ = ["EvaluationPlan", "load_inputs", "plan_evaluation"]

_SEED_ORDER = {t: i for i, t in enumerate(StrategyType)}


@dataclass(frozen=True)
class EvaluationPlan:
    """What one evaluation will do, decided before anything runs."""

    workspace: Path
    """The workspace: where the results are written (``.sprintflow/``), never what is judged."""
    tree: JudgedTree
    """What is judged: the tree the judge built (:mod:`sprintflow.judge`)."""
    contract: SprintContract
    project: ProjectConfig
    strategies: list[StrategyConfig]
    """In the seed's order; includes strategies only a criterion asks for (not required)."""
    executor: Executor
    iteration: int
    view: EvaluationView | None = None
    """The layers strategies run in (:mod:`~sprintflow.evaluate.view`); None: the tree itself."""
    references: Path | None = None
    """The folder of what each test-running check said on the sprint's baseline (:mod:`.outcomes`)."""
    recording: bool = False
    """This evaluation is the baseline's: it writes the references instead of reading them."""
    stamp: str = field(default_factory=lambda: evaluation_stamp())
    """What makes this evaluation's id its own: an iteration judged twice (local, then Docker; a
    resumed sprint) keeps both EvalResults."""

    @property
    def content_hash(self) -> str:
        """The judged tree's digest: the cache key of what is judged."""
        return self.tree.digest

    @property
    def source(self) -> Path:
        """The judged tree's folder: what the project's manifests and reports are read from."""
        return self.tree.root

    def run_for(self, strategy: StrategyConfig, root: Path | None = None) -> StrategyRun:
        """The run of ``strategy`` in ``root`` (its layer of the judged tree; default the tree itself)."""
        return StrategyRun(root or self.tree.root, strategy, self.project, self.executor, self.contract,
                           reference=self.reference_of(self.check_of(strategy)))

    def mutation_of(self, strategy: StrategyConfig) -> MutationJob | None:
        """The mutation check of a strategy that asks for one, in a sprint (a baseline to diff against)."""
        settings = getattr(strategy.config, "mutation", None)
        if not isinstance(settings, MutationSettings) or not settings.enabled or self.recording \
                or self.tree.pin_id is None:
            return None
        return MutationJob(settings, self.tree.root, self.tree.workspace, self.tree.pin_id)

    def check_of(self, strategy: StrategyConfig) -> str:
        """The strategy's name among the checks whose baseline is kept: its type and its place among
        strategies of that type (the same whichever others a plan runs)."""
        same = [s for s in self.strategies if s.type is strategy.type]
        return f"{strategy.type.value}-{same.index(strategy)}"

    def reference_of(self, check: str) -> Reference | None:
        """What the check named ``check`` (:meth:`check_of`, ``criterion-<id>``) said on the baseline; None
        when not known."""
        path = self.reference_file(check)
        if path is None or self.recording or not path.is_file():
            return None
        try:
            return Reference.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged reference judges as no reference: the other rules still hold

    def reference_file(self, check: str) -> Path | None:
        return self.references / f"{check}.json" if self.references is not None else None

    def layer_of(self, strategy: StrategyConfig) -> str:
        """The name of the strategy's layer in the view: unique, even for two strategies of one type."""
        return f"{self.strategies.index(strategy)}-{strategy.type.value}"

    def below(self, strategy: StrategyConfig | None = None) -> list[str]:
        """The layers a strategy (or a criterion's check: None) sees under its own: the build's output."""
        if strategy is not None and not STRATEGIES[strategy.type].needs_build:
            return []
        return [self.layer_of(s) for s in self.strategies if s.type is StrategyType.build]

    @property
    def evaluation_view(self) -> EvaluationView:
        if self.view is None:
            raise RuntimeError("the evaluation view is opened by the evaluate flow before any strategy runs")
        return self.view

    def tool_cache(self, strategy: StrategyConfig) -> ToolCache | None:
        """The judge's kept tool cache of ``strategy`` for this tree, when it is a checker that keeps one."""
        if not self.plugin(strategy).keeps_tool_caches:
            return None
        identity = {"strategy": strategy.to_dict(), "command": self.plugin(strategy).command(),
                    "executor": self.executor.describe(), "image": strategy.image}
        return tool_cache(self.tree.workspace, self.tree.root, identity)

    def plugin(self, strategy: StrategyConfig) -> Strategy:
        """The strategy class that runs ``strategy`` in this project."""
        return strategy_for(strategy, self.project)

    @property
    def eval_id(self) -> str:
        """``eval-<contractId>-<iteration>-<stamp>``: one per evaluation, the iteration still readable."""
        return f"eval-{self.contract.contract_id}-{self.iteration}-{self.stamp}"


def evaluation_stamp(now: datetime | None = None) -> str:
    """When an evaluation started (UTC, to the second) and 6 random hex digits: unique, and in time order.

    Example:
        >>> evaluation_stamp(datetime(2026, 5, 13, 10, 31, 0, tzinfo=UTC))[:16]
        '20260513T103100-'
    """
    return f"{(now or datetime.now(UTC)):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def load_inputs(workspace: Path | str, contract_path: Path | str, project: ProjectConfig | None = None
                ) -> tuple[SprintContract, ProjectConfig, list[StrategyConfig]]:
    """Load and check the contract, the config and the strategies to run; runs nothing.

    ``project`` is the pinned configuration of a sprint; without one the
    workspace's configuration is read now (and pinned for this evaluation).
    Raises InputError subclasses, so the CLI can refuse bad input before any flow starts.
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    contract = load_document(contract_path, SprintContract)
    project = project or load_project_config(workspace)
    strategies = list(project.strategies())
    configured = {s.type for s in strategies}
    for criterion in contract.success_criteria:
        method = criterion.verification_method
        if method in (VerificationMethod.manual, VerificationMethod.custom):
            continue
        wanted = StrategyType(method.value)
        if wanted not in configured:
            # A criterion asks for a check the config does not list: run the default,
            # not required as a strategy (the criterion carries its own requiredness).
            strategies.append(parse_strategy({"type": wanted.value, "required": False}))
            configured.add(wanted)
    strategies.sort(key=lambda s: _SEED_ORDER[s.type])
    for strategy in strategies:
        strategy_for(strategy, project).check()
    return contract, project, strategies


def plan_evaluation(workspace: Path | str, contract_path: Path | str, executor: Executor, tree: JudgedTree,
                    iteration: int | None = None, project: ProjectConfig | None = None) -> EvaluationPlan:
    """Everything one evaluation needs, decided before anything runs.

    Example:
        >>> from sprintflow.sandbox.executors import LocalExecutor
        >>> from sprintflow.judge.tree import JudgedTree
        >>> tree = JudgedTree(Path("examples/python-api").resolve(), "0" * 64, Path("examples/python-api").resolve())
        >>> plan = plan_evaluation("examples/python-api", "examples/python-api/.sprintflow/contracts/"
        ...                        "sprint-spec-20260115-todo-api-1.json", LocalExecutor(), tree)
        >>> [s.type.value for s in plan.strategies][:2], plan.eval_id.rsplit("-", 2)[0]
        (['build', 'typecheck'], 'eval-sprint-spec-20260115-todo-api-1-1')
    """
    contract, project, strategies = load_inputs(workspace, contract_path, project)
    return EvaluationPlan(
        workspace=Path(workspace).resolve(), tree=tree, contract=contract, project=project, strategies=strategies,
        executor=executor.for_tree(tree), iteration=iteration or len(contract.iteration_history) + 1,
    )


