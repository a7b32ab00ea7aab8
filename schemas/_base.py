"""Shared model base: camelCase JSON names, documented fields."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel

from sprintflow.io.layout import MAX_NAME, SAFE_NAME

SafeId = Annotated[str, StringConstraints(pattern=f"^{SAFE_NAME.pattern}$", max_length=MAX_NAME)]
"""An id that becomes a file name (contract, spec, eval): checked when the document is read."""


def utc_now() -> str:
    """ISO-8601 UTC timestamp with second precision, as the seeds write them."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Document(BaseModel):
    """Base of every sprintflow document.

    JSON names are the seeds' camelCase; Python names are snake_case. Unknown
    fields written by other tools are kept, so a rewrite never loses them.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        use_attribute_docstrings=True,
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
