import os
import resource
import time

from sprintflow.io.process import CappedBuffer, run_command


def _alive(marker: str) -> int:
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        count += 1
            except OSError:
                pass
    return count


def test_shell_semantics_and_exit_code(tmp_path):
    result = run_command("echo one && echo two >&2 && exit 3", cwd=tmp_path, timeout=10)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "one\n", "two\n")
    assert not result.timed_out and result.error is None


def test_hanging_command_is_killed_with_its_whole_tree(tmp_path):
    marker = f"sleep {9000 + os.getpid() % 997}"
    before = _alive(marker)
    result = run_command(f"({marker} &) ; {marker} & {marker}", cwd=tmp_path, timeout=1)
    assert result.timed_out
    time.sleep(0.2)
    assert _alive(marker) == before


def test_background_children_do_not_outlive_a_finished_command(tmp_path):
    marker = f"sleep {8000 + os.getpid() % 997}"
    run_command(f"{marker} & echo started", cwd=tmp_path, timeout=10)
    time.sleep(0.2)
    assert _alive(marker) == 0


def test_huge_output_is_capped_and_memory_stays_flat(tmp_path):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run_command("head -c 100000000 /dev/zero | tr '\\0' x; echo END", cwd=tmp_path, timeout=60,
                         output_limit=10_000)
    growth_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert result.dropped_bytes == 100_000_001 - 10_000 + 3
    assert result.stdout.endswith("END\n") and "bytes of output dropped" in result.stdout
    assert growth_kb < 50_000


def test_non_utf8_output_is_decoded_with_replacements(tmp_path):
    result = run_command(["python3", "-c", "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe done')"],
                         cwd=tmp_path, timeout=10)
    assert result.stdout == "ok \ufffd\ufffd done"


def test_missing_program_is_an_error_not_an_exception(tmp_path):
    result = run_command(["/nonexistent/tool"], cwd=tmp_path, timeout=5)
    assert result.exit_code is None and "could not start" in result.error


def test_capped_buffer_keeps_head_and_tail():
    buffer = CappedBuffer(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        buffer.write(chunk)
    assert buffer.text().startswith("abcde") and buffer.text().endswith("vwxyz")
    assert buffer.dropped == 16


def _escapes(marker: str) -> str:
    """A command that leaves daemons the process group cannot reach: setsid, and a double fork."""
    return f"(setsid sh -c '{marker} & wait' &) ; (sh -c '{marker} &' &) ; {marker}"


def test_contained_timeouts_leave_no_process_behind_setsid_and_double_forks_included(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from sprintflow.io.containment import Containment, containment_unavailable

    assert containment_unavailable() is None, containment_unavailable()
    marker = f"sleep {7000 + os.getpid() % 997}"
    with ThreadPoolExecutor(max_workers=10) as pool:
        results = list(pool.map(lambda _: run_command(_escapes(marker), cwd=tmp_path, timeout=0.3,
                                                      contain=Containment()), range(100)))
    assert all(result.timed_out for result in results)
    time.sleep(0.3)
    assert _alive(marker) == 0


def test_uncontained_setsid_daemons_do_escape_the_group_kill(tmp_path):
    """Why containment exists: the process group alone misses a setsid daemon."""
    marker = f"sleep {6000 + os.getpid() % 997}"
    run_command(_escapes(marker), cwd=tmp_path, timeout=0.3)
    time.sleep(0.3)
    try:
        assert _alive(marker) >= 1
    finally:
        os.system(f"pkill -f '{marker}'")


def test_contained_commands_cannot_see_or_change_hidden_paths(tmp_path):
    from sprintflow.io.containment import Containment

    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "held_out.py").write_text("SECRET = 42\n")
    (tmp_path / "answer.txt").write_text("the answer\n")
    hide = (str(tmp_path / "evals"), str(tmp_path / "answer.txt"))
    result = run_command("ls -A evals; cat answer.txt evals/held_out.py; echo 0 > evals/held_out.py; umount evals; "
                         "echo done", cwd=tmp_path, timeout=10, contain=Containment(hide=hide))
    assert result.stdout == "done\n", result.stdout
    assert "must be superuser" in result.stderr or "Operation not permitted" in result.stderr
    assert (tmp_path / "evals" / "held_out.py").read_text() == "SECRET = 42\n"
    assert sorted(p.name for p in (tmp_path / "evals").iterdir()) == ["held_out.py"]


def test_a_contained_command_reads_its_stdin_and_keeps_its_exit_code(tmp_path):
    from sprintflow.io.containment import Containment

    result = run_command("tr a-z A-Z; exit 4", cwd=tmp_path, timeout=10, stdin=b"prompt", contain=Containment())
    assert (result.stdout, result.exit_code) == ("PROMPT", 4)


def test_a_sigkilled_sprintflow_takes_its_contained_commands_with_it(tmp_path):
    """Its owner gone, nothing it started runs on: not the command, not its setsid or double-forked daemons."""
    import signal
    import subprocess
    import sys

    marker = f"sleep {8000 + os.getpid() % 997}"
    owner = subprocess.Popen([sys.executable, "-c", (
        "from sprintflow.io.process import Containment, run_command; "
        f"run_command({_escapes(marker)!r}, cwd={str(tmp_path)!r}, timeout=600, contain=Containment())")])
    try:
        for _ in range(100):  # until the command and its daemons run
            if _alive(marker) >= 3:
                break
            time.sleep(0.1)
        assert _alive(marker) >= 3
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    for _ in range(50):
        if _alive(marker) == 0:
            break
        time.sleep(0.1)
    assert _alive(marker) == 0
