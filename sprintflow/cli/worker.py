"""``sprintflow worker image``: the flow-run image of the Docker work pool.

See :mod:`sprintflow.sandbox.runner_image`.
"""

from __future__ import annotations

import click

__all__ = ["worker"]


@click.group()
def worker() -> None:
    """What Prefect workers need to run sprintflow's deployments."""


@worker.command()
@click.option("--tag", default="sprintflow-sandbox:runner", show_default=True, help="Tag of the image to build.")
@click.option("--base", default="sprintflow-sandbox:latest", show_default=True,
              help="Image to install sprintflow into (`sprintflow sandbox build` makes the default).")
def image(tag: str, base: str) -> None:
    """Build the Docker work pool's flow-run image locally: BASE with sprintflow installed.

    No registry is needed: pip runs in a setup container with the host's CA bundle,
    which is committed as the image. Its dependencies are a layer of their own
    (sprintflow-runner-deps:<hash>), so a rebuild after a code change takes seconds;
    an image whose sources did not change is reused as it is.

    Exit codes: 0 built or reused (it prints the tag), 2 a bad option, 3 no Docker engine answers or the
    build failed.

    \b
    Then: prefect work-pool create sprintflow-docker --type docker \\
            --base-job-template deployments/work-pools/docker-job-template.json
    """
    from sprintflow.sandbox.runner_image import build_runner_image

    click.echo(build_runner_image(tag, base, progress=lambda line: click.echo(line, err=True)))
