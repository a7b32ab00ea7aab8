"""sprintflow sandbox build|sweep: the container image strategies run in."""

from __future__ import annotations

import click

from sprintflow.schemas import DEFAULT_IMAGE


@click.group()
def sandbox() -> None:
    """Manage the sandbox image and containers of the DockerExecutor."""


@sandbox.command()
@click.option("--image", "tag", default=DEFAULT_IMAGE, show_default=True,
              help="Name to give the image (set executor.image to use another).")
@click.option("--package", "packages", multiple=True, help="Extra Debian package to install (repeatable).")
@click.option("--mirror", default=None, help="Debian mirror (default: the host's apt mirror).")
def build(tag: str, packages: tuple[str, ...], mirror: str | None) -> None:
    """Build the sandbox image locally, no registry needed (~2 min, needs root).

    debootstrap a minimal Debian bookworm, install Node.js, npm, Python with
    pytest/ruff/mypy and Chromium, then `docker import` it as IMAGE. Teams with
    a registry can skip this and set executor.image to any image instead.
    """
    from sprintflow.sandbox.image import build_sandbox_image

    build_sandbox_image(tag, mirror=mirror, extra_packages=list(packages),
                        progress=lambda line: click.echo(line, err=True))
    click.echo(tag)


@sandbox.command()
def sweep() -> None:
    """Remove leftover sprintflow containers: those past their deadline (a killed run left them)."""
    from sprintflow.evaluate.executors import sweep_containers

    click.echo(f"removed {sweep_containers()} container(s)")
