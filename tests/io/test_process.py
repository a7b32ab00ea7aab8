import os
import resource
import time

from sprintflow.io.process import CappedBuffer, run_command, scrubbed_env


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


def test_secrets_are_scrubbed():
    env = scrubbed_env(base={"PATH": "/bin", "GITHUB_TOKEN": "t", "AWS_ACCESS_KEY_ID": "a", "DB_PASSWORD": "p",
                             "OPENAI_API_KEY": "k", "HOME": "/root"})
    assert env == {"PATH": "/bin", "HOME": "/root"}


def test_capped_buffer_keeps_head_and_tail():
    buffer = CappedBuffer(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        buffer.write(chunk)
    assert buffer.text().startswith("abcde") and buffer.text().endswith("vwxyz")
    assert buffer.dropped == 16
