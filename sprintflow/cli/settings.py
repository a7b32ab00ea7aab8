"""sprintflow settings: every SPRINTFLOW_* setting, its value here and what it does."""

from __future__ import annotations

import json
import os

import click


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per setting.")
def settings(as_json: bool) -> None:
    """List every SPRINTFLOW_* setting by area: its variable, its value in this environment (or the
    default) and what it does. Secrets in a value (an engine's inline API key) are masked.

    \b
    Exit codes:
      0  listed
      2  a variable's value is not what its setting takes (named, with why)
    """
    from sprintflow.io.secrets import mask_secrets
    from sprintflow.settings import Settings, get_settings

    current = get_settings()  # a value its setting does not take: ConfigError, exit 2
    for group, names in Settings.groups():
        if not as_json:
            click.echo(f"{group}:")
        for name in names:
            variable, field = Settings.variable(name), Settings.model_fields[name]
            value = getattr(current, name)
            shown = None if value is None else mask_secrets(str(value))
            source = "environment" if os.environ.get(variable) else "default"
            if as_json:
                click.echo(json.dumps({"group": group, "variable": variable, "value": shown, "source": source,
                                       "description": field.description}))
                continue
            click.echo(f"  {variable} = {shown if shown is not None else '(unset)'}"
                       f"{'' if source == 'environment' else '  [default]'}")
            click.echo(f"      {field.description}")
