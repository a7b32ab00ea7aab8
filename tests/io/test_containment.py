"""A contained command can change nothing outside its tree, reach no daemon and read none of sprintflow's state."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sprintflow.errors import ContainmentFailed
from sprintflow.io.containment import Bind, Containment, containment_unavailable, own_state
from sprintflow.io.process import run_command

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _available():
    assert containment_unavailable() is None, containment_unavailable()


def _run(script: str, cwd: Path, **spec) -> tuple[str, str]:
    result = run_command(script, cwd=cwd, timeout=30, contain=Containment(**spec))
    assert result.error is None, result.error
    return result.stdout, result.stderr


def test_everything_outside_the_binds_is_read_only(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    tools = Path(os.__file__).parent  # the interpreter's own files (they may lie in HOME, whose writes vanish)
    out, err = _run(f"echo ok > made.txt && echo written; echo x > /var/tmp/sprintflow-contained; "
                    f"echo x > /usr/local/sprintflow-contained; echo x > {tools}/sprintflow-contained",
                    tree, binds=(Bind(str(tree), str(tree), writable=True),))
    assert out == "written\n" and err.count("Read-only file system") >= 2, err
    assert (tree / "made.txt").read_text() == "ok\n"
    for where in (Path("/var/tmp"), Path("/usr/local"), tools):
        assert not (where / "sprintflow-contained").exists()


def test_where_it_starts_is_visible_and_read_only_unless_bound(tmp_path):
    (tmp_path / "input.txt").write_text("seen\n")
    out, err = _run("cat input.txt; echo x > output.txt", tmp_path)
    assert out == "seen\n" and "Read-only file system" in err and not (tmp_path / "output.txt").exists()


def test_a_tree_is_shown_where_the_workspace_is_and_the_workspace_itself_is_out_of_reach(tmp_path):
    workspace, tree = tmp_path / "workspace", tmp_path / "judged"
    workspace.mkdir(), tree.mkdir()
    (workspace / "test_calc.py").write_text("real\n")
    (tree / "test_calc.py").write_text("judged\n")
    out, _ = _run(f"cat {workspace}/test_calc.py; echo weakened > {workspace}/test_calc.py; cat test_calc.py",
                  workspace, binds=(Bind(str(tree), str(workspace), writable=True),))
    assert out == "judged\nweakened\n"
    assert (workspace / "test_calc.py").read_text() == "real\n" and (tree / "test_calc.py").read_text() == "weakened\n"


def test_tmp_home_and_discarded_folders_are_private_and_vanish(tmp_path):
    deps = tmp_path / "node_modules"
    deps.mkdir()
    marker = f"sprintflow-contained-{os.getpid()}"
    out, err = _run(f"echo x > /tmp/{marker} && echo x > $HOME/.{marker} && echo x > {deps}/cache && "
                    f"cat {deps}/cache", tmp_path, binds=(Bind(str(tmp_path), str(tmp_path)),), discard=(str(deps),))
    assert out == "x\n", err
    assert not Path(f"/tmp/{marker}").exists() and not (Path.home() / f".{marker}").exists()
    assert not (deps / "cache").exists()


def test_hidden_writes_are_thrown_away_and_reported(tmp_path):
    secret = tmp_path / "evals"
    secret.mkdir()
    (secret / "held_out.py").write_text("SECRET = 42\n")
    result = run_command("ls -A evals; echo planted > evals/planted.py", cwd=tmp_path, timeout=30,
                         contain=Containment(binds=(Bind(str(tmp_path), str(tmp_path), writable=True),),
                                             hide=(str(secret),)))
    assert result.stdout == "" and result.hidden_writes == [str(secret / "planted.py")]
    assert sorted(p.name for p in secret.iterdir()) == ["held_out.py"]


def test_no_raw_disk_no_daemon_socket_and_none_of_sprintflows_state(tmp_path, monkeypatch):
    judge = tmp_path / "judge"
    (judge / "workspaces").mkdir(parents=True)
    (judge / "workspaces" / "manifest.json").write_text("{}")
    monkeypatch.setenv("SPRINTFLOW_JUDGE_HOME", str(judge))
    assert str(judge) in own_state()
    out, _ = _run(f"ls /dev; ls -A {judge}; test -S /run/docker.sock && echo docker-socket; "
                  "cat /proc/self/status | grep CapEff", tmp_path)
    devices = out.split("\n")[:out.split("\n").index("zero") + 1]
    assert not [d for d in devices if d.startswith(("sd", "vd", "nvme", "loop", "mem", "kmem"))], devices
    assert "manifest.json" not in out and "docker-socket" not in out
    assert "CapEff:\t0000000000000000" in out


def test_no_network_means_loopback_only(tmp_path):
    script = ("python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
              "c = socket.create_connection(s.getsockname()); print('loopback')\"; cat /proc/net/dev | "
              "grep -c ':' ")
    out, _ = _run(script, tmp_path, network=False)
    assert out.split() == ["loopback", "1"]  # lo is up, and it is the only interface


def test_a_view_that_cannot_be_built_is_the_machines_failure_and_nothing_runs(tmp_path):
    """Whatever the command was, it never ran: no verdict (exit 3, retried), not a failure blamed on the code."""
    with pytest.raises(ContainmentFailed, match="never ran: its containment could not be built: bind target"):
        run_command(f"touch {tmp_path}/ran", cwd=tmp_path, timeout=30,
                    contain=Containment(binds=(Bind(str(tmp_path), "/sprintflow-missing/x"),)))
    assert not (tmp_path / "ran").exists()


def test_a_command_cannot_pass_for_a_view_that_failed(tmp_path):
    """Only the init's status descriptor says whether the view was built: a command that prints the init's
    words and exits as it would stays the code's own failure, judged as such, and never holds that descriptor."""
    result = run_command("echo 'sprintflow-contain-failed:mount on /: Invalid argument' >&2; ls /proc/self/fd; "
                         "exit 125", cwd=tmp_path, timeout=30, contain=Containment())
    assert result.exit_code == 125 and result.error is None
    assert result.stderr == "sprintflow-contain-failed:mount on /: Invalid argument\n"
    assert sorted(int(fd) for fd in result.stdout.split()) == [0, 1, 2, 3]  # 3: ls's own listing of the folder


RACING_VIEW = """
import ctypes, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("contain_init", sys.argv[1])
init = importlib.util.module_from_spec(spec); spec.loader.exec_module(init)
base = sys.argv[2]
for name in ("leaves", "stays"):
    os.mkdir(f"{base}/{name}")
    init.mount("tmpfs", f"{base}/{name}", "tmpfs", 0, "size=1m")
libc, remount = ctypes.CDLL(None, use_errno=True), init.mount
def racing(source, target, fstype, flags, data=None):
    if target == f"{base}/leaves":  # another evaluation removes its view: the mount leaves, its folder stays
        assert libc.umount2(os.fsencode(target), 0) == 0
    remount(source, target, fstype, flags, data)
init.mount = racing
init.read_only_everywhere()
print(open("/proc/self/mountinfo").read())
"""


def test_a_mount_that_leaves_while_the_view_is_built_is_no_failure(tmp_path):
    """Concurrent evaluations mount and remove their views while a command's namespace is built: a mount
    listed when the view was read can be gone when it is made read-only (an evaluation once got no
    verdict for it). Every mount still there must end read-only, and the one that left fail nothing."""
    from sprintflow.io import contain_init
    from sprintflow.io.containment import _prefix

    prefix, _ = _prefix()
    assert prefix is not None
    done = subprocess.run([*prefix, sys.executable, "-c", RACING_VIEW, contain_init.__file__, str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    mounts = {fields[4]: fields[5].split(",") for fields in (line.split() for line in done.stdout.splitlines() if line)}
    assert f"{tmp_path}/leaves" not in mounts and "ro" in mounts[f"{tmp_path}/stays"]
    writable = [point for point, options in mounts.items()
                if "rw" in options and not point.startswith(("/proc", "/sys", "/dev"))]
    assert writable == []


def test_containment_is_found_from_a_folder_under_tmp(tmp_path):
    """The probe must not depend on where sprintflow was started: a clone under /tmp is a new user's first try,
    and from there the probe once failed, so every command ran uncontained."""
    started_in = tmp_path / "clone"
    started_in.mkdir()
    assert str(started_in).startswith("/tmp/")
    probe = subprocess.run([sys.executable, "-c", "from sprintflow.io.containment import containment_unavailable;"
                            "print(containment_unavailable())"], cwd=started_in, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert probe.stdout.strip() == "None", probe.stdout + probe.stderr


def test_what_the_command_names_under_tmp_is_shown_read_only(tmp_path):
    """An engine or a virtualenv in a folder under /tmp (a clone there, pytest's own temp folders) is the
    operator's: the private /tmp must not cover it, or the command fails for our environment, not its code."""
    tools = tmp_path / "tools"
    (tools / "bin").mkdir(parents=True)
    (tools / "engine.py").write_text("import sys; print('engine ran', sys.argv[1])\n")
    (tools / "bin" / "helper").write_text("#!/bin/sh\necho helper ran\n")
    (tools / "bin" / "helper").chmod(0o755)
    (tools / "secret").mkdir()
    (tools / "secret" / "key").write_text("k")
    loose = Path("/tmp") / f"sprintflow-loose-{os.getpid()}.py"
    loose.write_text("print('loose ran')\n")
    try:
        env = {**os.environ, "PATH": f"{tools / 'bin'}:{os.environ['PATH']}"}
        script = (f"python3 {tools}/engine.py one; helper; python3 '{loose}'; cat {tools}/secret/key; "
                  f"touch {tools}/new 2>/dev/null || echo refused")
        result = run_command(script, cwd=ROOT, timeout=30, env=env,
                             contain=Containment(hide=(str(tools / "secret"),)))
    finally:
        loose.unlink()
    assert result.error is None, result.error
    assert result.stdout.splitlines() == ["engine ran one", "helper ran", "loose ran", "refused"], \
        result.stdout + result.stderr
    assert not (tools / "new").exists()


def test_a_link_under_tmp_that_leads_out_of_it_is_not_followed(tmp_path):
    """A link in /tmp to a hidden folder must not become a way to see that folder."""
    secret = ROOT / "tests" / "fixtures"
    link = Path("/tmp") / f"sprintflow-link-{os.getpid()}"
    link.symlink_to(secret)
    try:
        out, _ = _run(f"ls {link}/ 2>/dev/null | head -1; echo done", tmp_path, hide=(str(secret),))
    finally:
        link.unlink()
    assert out.strip() == "done"


def test_naming_sprintflows_state_under_tmp_still_shows_nothing(tmp_path):
    """The judge's home may lie under /tmp (this suite keeps it there): a command that names it is shown what
    it names, and the state is hidden over it afterwards, as everywhere."""
    from sprintflow.settings import get_settings

    judge = get_settings().judge_home_path
    assert str(judge).startswith("/tmp/")
    secret = judge / "sprintflow-containment-probe.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("a reference answer")
    try:
        out, err = _run(f"cat {secret}; ls -A {judge}; echo end", tmp_path)
    finally:
        secret.unlink()
    assert out == "end\n", out + err
