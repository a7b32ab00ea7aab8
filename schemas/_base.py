"""Shared model base: camelCase JSON names, documented fields."""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

from sprintflow.io.layout import MAX_NAME, SAFE_NAME

SafeId = Annotated[str, StringConstraints(pattern=f"^{SAFE_NAME.pattern}$", max_length=MAX_NAME)]
"""An id that becomes a file name (contract, spec, eval): checked when the document is read."""

TEXT_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"
Text = Annotated[str, StringConstraints(pattern=TEXT_PATTERN)]
"""Text people read (titles, descriptions): no control characters but tab and newlines, which a
terminal would obey (an escape sequence in a title could rewrite the screen ``status`` prints)."""

MAX_SECONDS = 7 * 24 * 3600
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]
"""A timeout: positive and at most a week (``1e300`` overflows every clock it is added to)."""

IMAGE_PATTERN = r"^[a-z0-9][a-zA-Z0-9._/:@-]*$"
Image = Annotated[str, StringConstraints(pattern=IMAGE_PATTERN, max_length=255)]
"""A Docker image reference (``name[:tag][@digest]``); never an option (``--privileged``)."""

MEMORY_PATTERN = r"^[1-9][0-9]{0,12}[bkmgBKMG]?$"
Memory = Annotated[str, StringConstraints(pattern=MEMORY_PATTERN)]
"""Docker's memory size: a number of bytes, or with a unit, ``512m``, ``2g``."""
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,255}$"
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME_PATTERN)]
"""An environment variable's name: ``A=B`` would set a variable, not pass one."""

PATTERN_MESSAGES = {
    IMAGE_PATTERN: "not a Docker image reference (name[:tag][@digest], starting with a lowercase letter or digit)",
    MEMORY_PATTERN: "not a memory size (a number with an optional unit b, k, m or g: 512m, 2g)",
    ENV_NAME_PATTERN: "not an environment variable name (letters, digits and _; passEnv names variables "
                      "to pass, it does not set them)",
}
"""What a value that misses one of these patterns is not, said in words rather than as the regex."""

MAX_ITERATIONS = 1000
"""No sprint runs more iterations (and no contract has more sprints): a bound for every count of them."""


def _real_timestamp(value: str) -> str:
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not a date and time (ISO 8601, e.g. 2026-01-15T09:00:00Z)") from None
    return value


Timestamp = Annotated[str, AfterValidator(_real_timestamp)]
"""An ISO-8601 date and time that exists (``2026-02-30`` does not), kept as written."""


def attribute_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring written under each field of ``model`` and of the models it extends, by field name.

    Example:
        >>> from sprintflow.schemas.contract import SuccessCriterion
        >>> attribute_docstrings(SuccessCriterion)["required"]
        'True: the sprint cannot pass unless this criterion passes.'
    """
    found: dict[str, str] = {}
    for klass in reversed([k for k in model.__mro__ if issubclass(k, BaseModel) and k is not BaseModel]):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field, text in itertools.pairwise(body):
            if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
                    and isinstance(text, ast.Expr) and isinstance(text.value, ast.Constant)
                    and isinstance(text.value.value, str)):
                found[field.target.id] = inspect.cleandoc(text.value.value)
    return found


def utc_now() -> str:
    """ISO-8601 UTC timestamp with second precision, as the seeds write them."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Document(BaseModel):
    """Base of every sprintflow document.

    JSON names are the seeds' camelCase; Python names are snake_case. Unknown
    fields written by other tools are kept, so a rewrite never loses them.
    """

    # The fields' docstrings describe them in the generated JSON Schemas (:func:`attribute_docstrings`),
    # not through pydantic's ``use_attribute_docstrings``: on Python 3.11 that searches every loaded
    # module for each model's source, about 70 ms of every command once Prefect is loaded.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
    )

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class ConfigSection(Document):
    """Base of the configuration's sections: sprintflow's own files, so an unknown key is a typo.

    ``protectedPath`` for ``protectedPaths`` would otherwise protect nothing, silently.
    """

    model_config = ConfigDict(extra="forbid")
