#!/usr/bin/env python3
"""Runs one case of the hostile corpus (tests/hostile/cases/*.json) through the real
`aggnet` and checks its expected outcome.

A case: {"about": why it is hostile, "argv": [...] (after `aggnet`), "env": {...},
"files": {name: {"text": ...} | {"hex": ...} | {"link": target} | {"fifo": true}}, "expect": {"exit": N,
"stderr": substring, "stdout": substring}}. `{dir}` in argv and env is the case's own empty directory (its
files are written there; a name "a/b" makes the directory a), `{src}` the source root. Every
case must end within the timeout. A refused input (exit 2) is one line on stderr; a failed
run (any exit but 0) leaves no file in the directory (or below it) but the case's own, and
those (text and hex) as the case wrote them.

Usage: run_case.py AGGNET SOURCE_ROOT CASE.json
"""
import json
import os
import subprocess
import sys
import tempfile

TIMEOUT_S = 60


def fill(text, dir_, src):
    return text.replace("{dir}", dir_).replace("{src}", src)


def write_files(case, dir_):
    for name, content in case.get("files", {}).items():
        path = os.path.join(dir_, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if "link" in content:
            os.symlink(content["link"], path)
        elif content.get("fifo"):
            os.mkfifo(path)
        elif "hex" in content:
            with open(path, "wb") as f:
                f.write(bytes.fromhex(content["hex"]))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(content["text"])


def changed_files(case, dir_):
    """The case's text and hex files whose bytes are no longer what it wrote."""
    changed = []
    for name, content in case.get("files", {}).items():
        if "text" in content:
            want = content["text"].encode("utf-8")
        elif "hex" in content:
            want = bytes.fromhex(content["hex"])
        else:
            continue
        path = os.path.join(dir_, name)
        if os.path.islink(path) or not os.path.isfile(path):
            changed.append(name)
            continue
        with open(path, "rb") as f:
            if f.read() != want:
                changed.append(name)
    return changed


def listing(dir_):
    """Every path below dir_ (links not followed), relative to it."""
    paths = []
    for root, dirs, files in os.walk(dir_):
        paths += [os.path.relpath(os.path.join(root, n), dir_) for n in dirs + files]
    return sorted(paths)


def main():
    aggnet, src, case_path = sys.argv[1:4]
    with open(case_path, encoding="utf-8") as f:
        case = json.load(f)
    expect = case["expect"]
    with tempfile.TemporaryDirectory(prefix="aggnet-hostile-") as dir_:
        write_files(case, dir_)
        before = listing(dir_)
        env = dict(os.environ)
        env.update({k: fill(v, dir_, src) for k, v in case.get("env", {}).items()})
        argv = [aggnet] + [fill(a, dir_, src) for a in case["argv"]]
        try:
            r = subprocess.run(argv, cwd=src, env=env, capture_output=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            sys.exit(f"FAIL: no outcome within {TIMEOUT_S} s: {' '.join(argv)}")
        err = r.stderr.decode("utf-8", "replace")
        problems = []
        if r.returncode != expect["exit"]:
            problems.append(f"exit {r.returncode}, expected {expect['exit']}")
        if expect["exit"] == 2 and err.count("\n") != 1:
            problems.append("expected one line on stderr")
        if "stderr" in expect and expect["stderr"] not in err:
            problems.append(f"stderr lacks {expect['stderr']!r}")
        if "stdout" in expect and expect["stdout"] not in r.stdout.decode("utf-8", "replace"):
            problems.append(f"stdout lacks {expect['stdout']!r}")
        after = listing(dir_)
        if r.returncode != 0 and after != before:
            problems.append(f"left files behind: {sorted(set(after) - set(before))}")
        if r.returncode != 0:
            problems += [f"changed its file {name}" for name in changed_files(case, dir_)]
        if problems:
            sys.exit(f"FAIL {os.path.basename(case_path)} ({case['about']}): "
                     f"{'; '.join(problems)}\nstderr: {err}")
    print(f"ok: {case['about']}")


if __name__ == "__main__":
    main()
