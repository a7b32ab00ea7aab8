"""sprintflow sandbox build|prune|sweep: the images and containers strategies run in."""

from __future__ import annotations

import time
from pathlib import Path

import click

from sprintflow.schemas import DEFAULT_IMAGE


@click.group()
def sandbox() -> None:
    """Manage the sandbox images and containers of the DockerExecutor."""


@sandbox.command()
@click.argument("workspace", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--image", "tag", default=DEFAULT_IMAGE, show_default=True,
              help="The base image: built under this name, and what a WORKSPACE's layers start from.")
@click.option("--package", "packages", multiple=True,
              help="Extra Debian package to install in the base image (repeatable).")
@click.option("--mirror", default=None, help="Debian mirror for the base image (default: the host's apt mirror).")
def build(workspace: Path | None, tag: str, packages: tuple[str, ...], mirror: str | None) -> None:
    """Build the base image, or prepare WORKSPACE's own sandbox ahead of time.

    Without WORKSPACE: debootstrap a minimal Debian bookworm, install Node.js,
    npm, Python with pytest/ruff/mypy and Chromium, then `docker import` it as
    IMAGE (~2 min, needs root; no registry needed).

    With WORKSPACE: the layers its evaluations run in, exactly as an evaluation
    would prepare them: the node and python it declares (.nvmrc, .node-version,
    package.json engines or volta; .python-version or requires-python) and its
    dependencies installed from its lockfiles in a setup step that alone has
    network. Prints the image name; a second run with unchanged lockfiles finds
    everything cached. A declared runtime that cannot be provided exits 3.

    Exit codes: 0 built (or already cached), 2 bad input (no such workspace, a bad option),
    3 no Docker engine answers, the build failed, or a declared runtime cannot be provided.
    """
    if workspace is None:
        from sprintflow.sandbox.image import build_sandbox_image

        build_sandbox_image(tag, mirror=mirror, extra_packages=list(packages),
                            progress=lambda line: click.echo(line, err=True))
        click.echo(tag)
        return
    from sprintflow.errors import WorkspaceError
    from sprintflow.sandbox.prepare import prepare_sandbox

    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    started = time.monotonic()
    prepared = prepare_sandbox(workspace, base_image=tag, progress=lambda line: click.echo(line, err=True))
    elapsed = time.monotonic() - started
    if prepared is None:
        click.echo(f"{workspace}: declares no runtime or dependencies; strategies run in {tag} "
                   f"({elapsed:.2f} s)", err=True)
        click.echo(tag)
        return
    click.echo(f"ready in {elapsed:.2f} s: {prepared.description}", err=True)
    click.echo(prepared.image)


@sandbox.command()
@click.option("--keep", default=10, show_default=True, type=click.IntRange(min=0),
              help="Dependency layers to keep (the most recently used).")
@click.option("--older-than", "older_than_days", default=None, type=click.FloatRange(min=0),
              help="Also remove kept layers unused for this many days.")
@click.option("--dry-run", is_flag=True, help="Print what would be removed, remove nothing.")
def prune(keep: int, older_than_days: float | None, dry_run: bool) -> None:
    """Keep the sandbox cache bounded: remove the least recently used layers.

    Keeps the KEEP most recently used dependency layers (and their node_modules
    volumes), the runtime layers they build on, and the downloads those need;
    removes the rest. Layers in use by a running container are kept. The base
    images (sprintflow-sandbox:latest, sprintflow-base:*) are never removed.

    Exit codes: 0 pruned (with --dry-run: listed), 2 a bad option, 3 no Docker engine answers.
    """
    from sprintflow.sandbox.prune import prune_sandbox

    report = prune_sandbox(keep=keep, older_than_s=None if older_than_days is None else older_than_days * 86400,
                           dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    for line in report.removed:
        click.echo(f"{verb} {line}")
    click.echo(f"{verb} {len(report.removed)}, kept {len(report.kept)} "
               f"({report.freed_bytes / 1e6:.0f} MB of images {'to free' if dry_run else 'freed'})")


@sandbox.command()
def sweep() -> None:
    """Remove leftover sprintflow containers: those past their deadline (a killed run left them).

    Exit codes: 0 swept (the count may be 0), 3 no Docker engine answers.
    """
    from sprintflow.sandbox.docker_host import sweep_containers

    click.echo(f"removed {sweep_containers()} container(s)")
