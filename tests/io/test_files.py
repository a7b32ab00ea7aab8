import json
import multiprocessing

from sprintflow.io.files import append_ndjson, atomic_write_text, read_ndjson


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "a" / "doc.json"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["doc.json"]


def _writer(path, worker, count):
    for i in range(count):
        append_ndjson(path, {"worker": worker, "i": i, "pad": "x" * (i % 50)})


def test_concurrent_appends_lose_and_tear_nothing(tmp_path):
    path = tmp_path / "events.ndjson"
    procs = [multiprocessing.Process(target=_writer, args=(path, w, 300)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    lines = list(read_ndjson(path))
    assert all(line.error is None for line in lines)
    assert sorted((line.record["worker"], line.record["i"]) for line in lines) == \
        [(w, i) for w in range(4) for i in range(300)]


def test_torn_last_line_is_reported_and_kept(tmp_path):
    path = tmp_path / "events.ndjson"
    append_ndjson(path, {"n": 1})
    with path.open("a") as handle:
        handle.write('{"n": 2, "tor')
    lines = list(read_ndjson(path))
    assert lines[0].record == {"n": 1}
    assert lines[1].record is None and "torn line" in lines[1].error
    append_ndjson(path, {"n": 3})
    text = path.read_text()
    assert '{"n": 2, "tor\n' in text  # never rewritten away
    assert [json.loads(line)["n"] for line in text.splitlines() if line.endswith("}")] == [1, 3]


def test_every_write_that_creates_the_state_folder_gives_it_its_gitignore(tmp_path):
    from sprintflow.io.files import file_lock
    from sprintflow.io.layout import STATE_GITIGNORE, WorkspaceLayout

    def lock(layout):
        with file_lock(layout.lock_file):
            pass

    for name, write in (("lock", lock),
                        ("bugs", lambda layout: append_ndjson(layout.bugs_file, {"event": "opened"})),
                        ("eval", lambda layout: atomic_write_text(layout.eval_file("eval-x-1"), "{}"))):
        layout = WorkspaceLayout(tmp_path / name)
        layout.root.mkdir()
        write(layout)
        assert layout.gitignore_file.read_text() == STATE_GITIGNORE, name


def test_a_gitignore_people_edited_is_theirs(tmp_path):
    from sprintflow.io.layout import WorkspaceLayout

    layout = WorkspaceLayout(tmp_path)
    layout.state.mkdir()
    layout.gitignore_file.write_text("lock\n")
    atomic_write_text(layout.eval_file("eval-x-1"), "{}")
    assert layout.gitignore_file.read_text() == "lock\n"
