#!/usr/bin/env python3
"""Check the GitHub Action (action.yml) and the sample workflows without GitHub.

1. action.yml validates against the action-metadata JSON schema vendored beside it
   (scripts/action/github-action.schema.json: SchemaStore's github-action.json, as the PyPI
   package check-jsonschema 0.39.0 vendors it, SHA-256
   224326cc5a334bdb97b56b6fc320cd4381ba7d61b477b425ed506e6a420b52ba).
2. actionlint passes on docs/ci/*.yml and scripts/action/test-workflow.yml (its `uses: ./` step
   is checked against action.yml's inputs; with shellcheck on the PATH, actionlint also checks
   every workflow `run:` script).
3. shellcheck passes on scripts/action/*.sh and on every `run:` script of action.yml.
4. The test workflow's `uses: ./` step runs as the runner would: each `run:` step of action.yml
   with its `${{ }}` expressions filled in, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_PATH,
   GITHUB_WORKSPACE, GITHUB_ACTION_PATH and RUNNER_TEMP pointing at temp files, and each `uses:`
   step's `with:` inputs checked without running it (the files exist; the SARIF file validates
   against the SARIF 2.1.0 schema). The install step installs `--wheel FILE` when given; without
   it, the step is not run and the cargo-built binary (`--memcert BIN`) stands in.

Usage: check-action.py --memcert BIN [--wheel FILE]. Needs on the PATH: actionlint and
shellcheck; in this Python: ruamel.yaml and jsonschema (check-jsonschema brings both).
Exit 0 when everything holds; else the failures, one per line, and exit 1.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = ROOT / "crates/memcert/tests/sarif_schema/sarif-2.1.0.schema.json"
ACTION_SCHEMA = ROOT / "scripts/action/github-action.schema.json"
TIMEOUT = 900

failures: list[str] = []


def fail(what: str) -> None:
    failures.append(what)
    print(f"FAIL {what}", flush=True)


def ok(what: str) -> None:
    print(f"ok   {what}", flush=True)


def load(path: Path):
    return YAML(typ="safe").load(path.read_text())


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)


def check_schema(action) -> None:
    schema = json.loads(ACTION_SCHEMA.read_text())
    errors = [f"{list(e.path)}: {e.message}" for e in jsonschema.Draft7Validator(schema).iter_errors(action)]
    if errors:
        fail("action.yml against the action-metadata schema: " + "; ".join(errors))
    else:
        ok("action.yml validates against the action-metadata schema")


def check_actionlint() -> None:
    files = sorted(glob.glob(str(ROOT / "docs/ci/*.yml"))) + [str(ROOT / "scripts/action/test-workflow.yml"), str(ROOT / ".github/workflows/release.yml")]
    p = run(["actionlint", "-no-color", *files], cwd=ROOT)
    if p.returncode != 0:
        fail("actionlint: " + (p.stdout + p.stderr).strip().replace("\n", " | "))
    else:
        ok(f"actionlint on {len(files)} workflows")


def check_shellcheck(action) -> None:
    scripts = sorted(glob.glob(str(ROOT / "scripts/action/*.sh")))
    with tempfile.TemporaryDirectory() as tmp:
        for i, step in enumerate(action["runs"]["steps"]):
            if "run" in step:
                f = Path(tmp) / f"step-{i}.sh"
                # Expressions are filled in before bash sees the script: stand a word in.
                body = re.sub(r"\$\{\{.*?\}\}", "EXPR", step["run"])
                f.write_text("#!/usr/bin/env bash\n" + body + "\n")
                scripts.append(str(f))
        p = run(["shellcheck", "--shell=bash", *scripts])
    if p.returncode != 0:
        fail("shellcheck: " + p.stdout.strip().replace("\n", " | "))
    else:
        ok(f"shellcheck on {len(scripts)} scripts")


class Context:
    """What `${{ }}` expressions of action.yml may read."""

    def __init__(self, inputs: dict[str, str]):
        self.inputs = inputs
        self.steps: dict[str, dict[str, str]] = {}

    def value(self, expr: str) -> str:
        expr = expr.strip()
        if m := re.fullmatch(r"inputs\.([A-Za-z0-9_-]+)", expr):
            return self.inputs.get(m.group(1), "")
        if m := re.fullmatch(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)", expr):
            return self.steps.get(m.group(1), {}).get(m.group(2), "")
        if expr == "github.action_ref":
            return ""
        if expr == "github.event.pull_request.head.repo.fork":
            return ""
        if m := re.fullmatch(r"'([^']*)'", expr):
            return m.group(1)
        raise ValueError(f"expression not understood by this check: {expr}")

    def condition(self, expr: str) -> bool:
        expr = expr.strip()
        if expr.startswith("${{") and expr.endswith("}}"):
            expr = expr[3:-2]
        result = True
        for part in expr.split("&&"):
            part = part.strip()
            if part == "always()":
                continue
            if m := re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", part):
                a, op, b = self.value(m.group(1)), m.group(2), self.value(m.group(3))
                result = result and ((a == b) if op == "==" else (a != b))
            else:
                raise ValueError(f"condition not understood by this check: {part}")
        return result

    def fill(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1)), str(text))


def outputs_of(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def emulate(action, memcert: str, wheel: str | None) -> None:
    workflow = load(ROOT / "scripts/action/test-workflow.yml")
    step = next(s for s in workflow["jobs"]["certify"]["steps"] if s.get("uses") == "./")
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    inputs.update({k: str(v) for k, v in step.get("with", {}).items()})
    if wheel:
        inputs["wheel"] = wheel
    ctx = Context(inputs)
    sarif_schema = json.loads(SARIF_SCHEMA.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        summary, path_file = tmp / "summary.md", tmp / "path"
        summary.touch()
        path_file.touch()
        runner_temp = tmp / "runner"
        runner_temp.mkdir()
        for i, s in enumerate(action["runs"]["steps"]):
            name = s.get("name", f"step {i}")
            if "if" in s and not ctx.condition(s["if"]):
                ok(f"emulated step '{name}': skipped by its if")
                continue
            if "uses" in s:
                with_ = {k: ctx.fill(v) for k, v in s.get("with", {}).items()}
                for key in ("path", "sarif_file"):
                    if key in with_ and not Path(with_[key]).exists():
                        fail(f"emulated step '{name}': {key} {with_[key]} does not exist")
                if "sarif_file" in with_:
                    log = json.loads(Path(with_["sarif_file"]).read_text())
                    errs = [e.message for e in jsonschema.Draft7Validator(sarif_schema, format_checker=jsonschema.FormatChecker()).iter_errors(log)]
                    if errs:
                        fail(f"emulated step '{name}': the SARIF file breaks the schema: {errs[:3]}")
                    elif not log["runs"][0]["results"]:
                        fail(f"emulated step '{name}': the SARIF file has no results for a one-flaw handler")
                ok(f"emulated step '{name}': uses {s['uses']} with {sorted(with_)} checked, not run")
                continue
            out = tmp / f"output-{i}"
            out.touch()
            env = {
                "PATH": os.environ["PATH"],
                "HOME": os.environ.get("HOME", str(tmp)),
                "GITHUB_OUTPUT": str(out),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_PATH": str(path_file),
                "GITHUB_WORKSPACE": str(ROOT),
                "GITHUB_ACTION_PATH": str(ROOT),
                "RUNNER_TEMP": str(runner_temp),
            }
            for k in ("MEMCERT_PYTHON",):
                if k in os.environ:
                    env[k] = os.environ[k]
            env.update({k: ctx.fill(v) for k, v in s.get("env", {}).items()})
            if s.get("id") == "install" and not wheel:
                ctx.steps["install"] = {"memcert": memcert}
                ok(f"emulated step '{name}': not run (no --wheel); the cargo-built binary stands in")
                continue
            if s.get("id") == "certify" and os.environ.get("MEMCERT_PYTHON"):
                env["INPUT_PYTHON_EXE"] = env.get("INPUT_PYTHON_EXE") or os.environ["MEMCERT_PYTHON"]
            cwd = ROOT / ctx.fill(s.get("working-directory", "."))
            p = subprocess.run(["bash", "-e", "-c", ctx.fill(s["run"])], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
            ctx.steps[s.get("id", f"_{i}")] = outputs_of(out)
            if s.get("name") == "Verdict":
                if p.returncode != 1:
                    fail(f"emulated step '{name}': ended {p.returncode}, expected 1 (the handler is not certified)")
                else:
                    ok(f"emulated step '{name}': ends the job with 1 (not certified)")
            elif p.returncode != 0:
                fail(f"emulated step '{name}': exit {p.returncode}: {(p.stdout + p.stderr)[-2000:]}")
            else:
                ok(f"emulated step '{name}': outputs {sorted(ctx.steps[s.get('id', f'_{i}')])}")
        cert = ctx.steps.get("certify", {})
        if cert.get("certified") != "false" or cert.get("exit-code") != "1":
            fail(f"the certify step's outputs are {cert}, expected certified=false, exit-code=1")
        if "memcert" not in summary.read_text():
            fail("the job summary holds no memcert report")
        if wheel and not path_file.read_text().strip():
            fail("the install step put nothing on GITHUB_PATH")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memcert", required=True, help="the cargo-built memcert binary")
    ap.add_argument("--wheel", help="a memcert wheel for the install step")
    args = ap.parse_args()
    action = load(ROOT / "action.yml")
    check_schema(action)
    check_actionlint()
    check_shellcheck(action)
    emulate(action, str(Path(args.memcert).resolve()), args.wheel)
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
