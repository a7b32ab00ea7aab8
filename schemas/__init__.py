"""Pydantic models (the source of truth), their generated JSON Schemas, and validation."""

from ._base import Document, utc_now
from .config import (
                     DEFAULT_IMAGE,
                     PRESETS,
                     Commands,
                     EngineConfig,
                     EvaluatorConfig,
                     ExecutorConfig,
                     ProjectConfig,
                     SprintConfig,
                     TesterConfig,
)
from .contract import (
                     ContractStatus,
                     Feature,
                     IterationRecord,
                     PlanSpec,
                     SprintContract,
                     SuccessCriterion,
                     VerificationMethod,
)
from .evaluation import (
                     Category,
                     CriterionResult,
                     Diagnostic,
                     EvalResult,
                     ExecutorRecord,
                     GeneratorFeedback,
                     InferredCommand,
                     Outcome,
                     Priority,
                     Regression,
                     Score,
                     StrategyResult,
                     StrategyType,
)
from .strategies import StrategyConfig, parse_strategy
from .validation import KINDS, detect_kind, json_schema, load_document, validate_data

__all__ = [
    "Category", "Commands", "ContractStatus", "CriterionResult", "DEFAULT_IMAGE", "Diagnostic", "Document",
    "EngineConfig", "EvalResult", "EvaluatorConfig", "ExecutorConfig", "ExecutorRecord", "Feature", "GeneratorFeedback",
    "InferredCommand", "IterationRecord", "KINDS", "Outcome", "PRESETS", "PlanSpec", "Priority", "ProjectConfig",
    "Regression",
    "Score", "SprintConfig", "SprintContract", "StrategyConfig", "StrategyResult", "StrategyType", "SuccessCriterion",
    "TesterConfig", "VerificationMethod", "detect_kind", "json_schema", "load_document", "parse_strategy", "utc_now",
    "validate_data",
]
