import json
import subprocess
import sys

from tests.schemas.test_schemas import SEED_CONTRACT


def sprintflow(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True, cwd=cwd)


def test_valid_contract_exits_0(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(SEED_CONTRACT))
    result = sprintflow("validate", str(path))
    assert result.returncode == 0, result.stderr
    assert "valid contract" in result.stdout


def test_every_problem_is_printed_with_file_and_path_and_files_are_untouched(tmp_path):
    bad = json.loads(json.dumps(SEED_CONTRACT))
    bad["successCriteria"][0]["verificationMethod"] = "vibes"
    bad["sprintNumber"] = 0
    path = tmp_path / "c.json"
    text = json.dumps(bad)
    path.write_text(text)
    broken = tmp_path / "broken.json"
    broken.write_text("{ nope")
    result = sprintflow("validate", str(path), str(broken))
    assert result.returncode == 2
    assert f"{path}: successCriteria/0/verificationMethod: 'vibes' is not one of" in result.stderr
    assert f"{path}: sprintNumber: 0 is less than the minimum of 1" in result.stderr
    assert f"{broken}: invalid JSON at line 1 column 3" in result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_text() == text


def test_depends_on_is_checked_against_the_other_files(tmp_path):
    first = dict(SEED_CONTRACT, dependsOn=["sprint-spec-20260326-user-auth-9"])
    (tmp_path / "a.json").write_text(json.dumps(first))
    (tmp_path / "b.json").write_text(json.dumps({"evalId": "x"}))
    result = sprintflow("validate", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert result.returncode == 2
    assert "dependsOn/0: unknown contract 'sprint-spec-20260326-user-auth-9'" in result.stderr


def test_unknown_kind_and_missing_file(tmp_path):
    (tmp_path / "x.json").write_text("[1, 2]")
    result = sprintflow("validate", str(tmp_path / "x.json"), str(tmp_path / "missing.json"))
    assert result.returncode == 2
    assert "cannot tell the document kind; pass --kind" in result.stderr
    assert "missing.json: file not found" in result.stderr


def test_schema_model_and_rule_problems_of_a_file_come_together_in_document_order(tmp_path):
    bad = json.loads(json.dumps(SEED_CONTRACT))
    bad["createdAt"] = "2026-02-30T09:00:00Z"             # the model's: no such day
    bad["title"] = "Ship\x1b[2J it"                        # the schema's: a control character
    for criterion in bad["successCriteria"]:               # the seed's rules: no build criterion left
        if criterion["verificationMethod"] == "build":
            criterion["verificationMethod"] = "manual"
    bad["successCriteria"][0]["criterionId"] = "sc-9-1"    # the seed's rules: the id format
    path = tmp_path / "c.json"
    path.write_text(json.dumps(bad, indent=2))
    result = sprintflow("validate", str(path))
    assert result.returncode == 2
    where = [line.split(": ")[2] for line in result.stderr.splitlines()]
    assert where == ["title", "createdAt", "successCriteria", "successCriteria/0/criterionId"], result.stderr
    config = tmp_path / "sprintflow.toml"
    config.write_text('[executor]\nmemory = "lots"\npassEnv = ["A=B"]\n[sprint]\nbranchPattern = "../{x}"\n'
                      '[[evaluator.strategies]]\ntype = "custom"\ncommand = "x"\n[evaluator.strategies.config]\n'
                      'passCondition = "output.a ==="\n')
    result = sprintflow("validate", str(config))
    assert result.returncode == 2
    where = [line.split(": ")[2] for line in result.stderr.splitlines()]
    assert where == ["executor/memory", "executor/passEnv/0", "sprint/branchPattern", "evaluator/strategies/0/config",
                     "evaluator/strategies/0/config/passCondition"], result.stderr
