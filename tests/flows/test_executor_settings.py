"""The config's [executor] settings are what the strategies run under, read back from inside the
container by the judge itself, and recorded in the EvalResult."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from sprintflow.flows.evaluate import evaluate_flow

CONTRACT = {
    "contractId": "sprint-s-1", "specId": "s", "sprintNumber": 1, "title": "t", "description": "d",
    "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    "generatorNotes": "", "evaluatorNotes": "", "estimatedDuration": "small",
    "successCriteria": [{"criterionId": "sc-1-1", "description": "It builds.", "verificationMethod": "build",
                         "required": True},
                        {"criterionId": "sc-1-2", "description": "The check holds.",
                         "verificationMethod": "custom", "customCommand": "true", "required": True}]}

# cgroup v2 files first, v1 as fallback: whichever the engine uses.
READ_LIMITS = ("python3 -c \"import json, pathlib; r = lambda *ps: next(pathlib.Path(p).read_text().split()[0] "
               "for p in ps if pathlib.Path(p).exists()); print(json.dumps({"
               "'memory': int(r('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes')), "
               "'cpu': int(r('/sys/fs/cgroup/cpu.max', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us')), "
               "'pids': int(r('/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/pids/pids.max')), "
               "'passed': __import__('os').environ.get('SPRINTFLOW_TEST_PASSED')}))\"")


def _workspace(root, executor: str, strategies: str):
    root.mkdir()
    (root / "sprintflow.toml").write_text(f"[executor]\n{executor}\n\n{strategies}")
    (root / "contract.json").write_text(json.dumps(CONTRACT))
    return root


def test_docker_limits_output_cap_and_passed_env_are_honoured(prefect_harness, docker_ready, tmp_path,
                                                               monkeypatch):
    monkeypatch.setenv("SPRINTFLOW_TEST_PASSED", "yes")
    monkeypatch.setenv("SPRINTFLOW_TEST_NOT_PASSED", "no")
    strategies = (
        '[[evaluator.strategies]]\ntype = "build"\n'
        'command = "head -c 200000 /dev/zero | tr \'\\\\0\' y; echo; echo BUILD-END"\n\n'
        '[[evaluator.strategies]]\ntype = "custom"\nplugin = "limits"\n'
        f'[evaluator.strategies.config]\ncommand = "{READ_LIMITS.replace(chr(34), chr(92) + chr(34))}"\n'
        'parseOutput = "json"\n'
        'passCondition = "output.memory === 268435456 && (output.cpu === 50000) && output.pids === 64 '
        '&& output.passed === \'yes\'"\n')
    workspace = _workspace(tmp_path / "ws", 'kind = "docker"\nmemory = "256m"\ncpus = 0.5\npids = 64\n'
                                            'outputLimit = 4096\npassEnv = ["SPRINTFLOW_TEST_PASSED"]', strategies)
    result = evaluate_flow(str(workspace), str(workspace / "contract.json"), use_cache=False)

    limits = next(s for s in result.strategy_results if s.strategy == "limits")
    assert limits.result.value == "pass", limits.details  # the container itself reports the limits
    build = next(s for s in result.strategy_results if s.strategy == "build")
    assert build.result.value == "pass" and build.output.endswith("BUILD-END") and len(build.output) < 4096
    record = result.executor
    assert record is not None and record.kind == "docker"
    assert (record.memory, record.cpus, record.pids, record.output_limit) == ("256m", 0.5, 64, 4096)
    assert record.image and record.image_id and record.image_id.startswith("sha256:")
    assert record.network == [] and record.pass_env == ["SPRINTFLOW_TEST_PASSED"]
    stored = json.loads((workspace / ".sprintflow" / "evals" / f"{result.eval_id}.json").read_text())
    assert stored["executor"]["imageId"] == record.image_id


def test_local_kind_runs_on_the_host_whatever_the_image(prefect_harness, tmp_path):
    host_only = Path(tempfile.mkdtemp(dir="/var/tmp")) / "on-the-host-only"  # no container could see it
    host_only.touch()
    strategies = f'[[evaluator.strategies]]\ntype = "build"\ncommand = "test -e {host_only}"\n'
    workspace = _workspace(tmp_path / "ws", 'kind = "local"\nimage = "no-such-image:0"', strategies)
    result = evaluate_flow(str(workspace), str(workspace / "contract.json"), use_cache=False)
    assert result.executor is not None and result.executor.kind == "local" and result.executor.image is None
    assert result.strategy_results[0].result.value == "pass"
