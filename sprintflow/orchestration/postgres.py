"""A PostgreSQL cluster in a folder, for a team's Prefect server: created once, started and stopped with it.

SQLite allows one writer at a time: a server that many workers, schedules and people use at
once answers "database is locked" as retryable 503s, and clients back off. Prefect's answer
for a shared server is PostgreSQL; ``sprintflow server --postgres DIR`` makes one with the
machine's own PostgreSQL (Debian's ``postgresql`` package, found on PATH or in
``/usr/lib/postgresql/<version>/bin``), or ``--database-url`` points at any reachable one.

The cluster keeps its data in ``DIR/data`` and listens on a Unix socket in ``DIR`` only, no
TCP port: what may connect is what may enter ``DIR`` (its owner; the Prefect server is the
only client). PostgreSQL refuses to run as root, so under root it runs as the ``postgres``
user the package creates, and ``DIR`` is given to that user.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from sprintflow.errors import InfrastructureError
from sprintflow.io.process import Child, run_command, spawn, stop_process

__all__ = ["DATABASE", "ROLE", "cluster_url", "postgres_binary", "start_cluster", "stop_cluster"]

DATABASE = "prefect"
ROLE = "prefect"
READY_TIMEOUT_S = 60
_SOCKET_PATH_MAX = 107
"""A Unix socket's path is at most this long (``sun_path``); the socket is ``DIR/.s.PGSQL.5432``."""


def postgres_binary(name: str) -> str:
    """A PostgreSQL program (``initdb``, ``postgres``, ``pg_isready``, ``createdb``), all of one install:
    the newest Debian one (``/usr/lib/postgresql/<version>/bin``), else the one ``initdb`` on PATH is of.

    Raises:
        InfrastructureError: PostgreSQL is not installed.
    """
    installs = sorted((path.parent for path in Path("/usr/lib/postgresql").glob("*/bin/initdb")),
                      key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0)
    on_path = shutil.which("initdb")
    folders = installs[-1:] or ([Path(on_path).resolve().parent] if on_path else [])
    if not folders or not (folders[0] / name).is_file():
        raise InfrastructureError(f"PostgreSQL's {name} was not found (/usr/lib/postgresql/*/bin, PATH): install "
                                  "it (apt-get install postgresql), or point at a running server with --database-url")
    return str(folders[0] / name)


def cluster_url(folder: Path) -> str:
    """The database URL of the cluster in ``folder``, for ``PREFECT_API_DATABASE_CONNECTION_URL``.

    Example:
        >>> cluster_url(Path("/srv/prefect-db"))
        'postgresql+asyncpg://prefect@/prefect?host=/srv/prefect-db'
    """
    return f"postgresql+asyncpg://{ROLE}@/{DATABASE}?host={folder}"


def start_cluster(folder: Path) -> Child:
    """Start the cluster of ``folder`` (created first when it has none), ready for the Prefect server.

    Its log is ``folder/postgres.log``. Stop it with :func:`stop_cluster`.

    Raises:
        InfrastructureError: PostgreSQL is missing, refused the folder, or did not come up.
    """
    folder = folder.resolve()
    if len(str(folder / ".s.PGSQL.5432")) > _SOCKET_PATH_MAX:
        raise InfrastructureError(f"{folder}: too long a path for PostgreSQL's socket in it "
                                  f"(at most {_SOCKET_PATH_MAX - 13} characters): choose a shorter one")
    user = _cluster_user(folder)
    if not (folder / "data" / "PG_VERSION").is_file():
        _run(user, [postgres_binary("initdb"), "-D", str(folder / "data"), "-U", ROLE, "--auth=trust",
                    "-E", "UTF8", "--no-instructions"], "create the cluster", timeout=180,
             hint=" (run as the postgres user: every folder above it must let others enter)" if user else "")
    with (folder / "postgres.log").open("ab") as log:
        process = spawn([postgres_binary("postgres"), "-D", str(folder / "data"), "-c", "listen_addresses=",
                         "-c", f"unix_socket_directories={folder}"], env=_env(), stdout=log, stderr=log, user=user)
    try:
        _wait_ready(folder, process, user)
        created = run_command([postgres_binary("createdb"), "-h", str(folder), "-U", ROLE, DATABASE], cwd="/",
                              timeout=60, env=_env(), user=user)
        if not created.ok and "already exists" not in created.stderr:
            raise InfrastructureError(f"PostgreSQL in {folder} did not create the database {DATABASE}: "
                                      f"{created.stderr.strip() or created.error}")
    except BaseException:
        stop_cluster(process)
        raise
    return process


def stop_cluster(process: Child, timeout: float = 30) -> None:
    """Stop a cluster :func:`start_cluster` started: SIGINT is PostgreSQL's fast shutdown (clean, no recovery)."""
    stop_process(process, timeout)


def _cluster_user(folder: Path) -> str | None:
    """Who runs the cluster: this user, or under root the ``postgres`` user (given the folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam("postgres")
    except KeyError:
        raise InfrastructureError("PostgreSQL does not run as root, and there is no postgres user to run it "
                                  "as: run sprintflow server as another user, or install postgresql") from None
    os.chown(folder, entry.pw_uid, entry.pw_gid)
    os.chmod(folder, 0o700)
    return "postgres"


def _env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def _run(user: str | None, argv: list[str], what: str, timeout: float, hint: str = "") -> None:
    done = run_command(argv, cwd="/", timeout=timeout, env=_env(), user=user)
    if not done.ok:
        reason = (done.stderr.strip() or done.stdout.strip() or done.error or "").splitlines()[-3:]
        raise InfrastructureError(f"PostgreSQL could not {what} in {argv[2]}{hint}: {' / '.join(reason)}")


def _wait_ready(folder: Path, process: Child, user: str | None) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise InfrastructureError(f"PostgreSQL in {folder} exited with code {process.returncode}: see "
                                      f"{folder / 'postgres.log'}")
        probe = run_command([postgres_binary("pg_isready"), "-q", "-h", str(folder), "-U", ROLE], cwd="/",
                            timeout=10, env=_env(), user=user)
        if probe.ok:
            return
        time.sleep(0.25)
    raise InfrastructureError(f"PostgreSQL in {folder} was not ready within {READY_TIMEOUT_S} s: see "
                              f"{folder / 'postgres.log'}")
