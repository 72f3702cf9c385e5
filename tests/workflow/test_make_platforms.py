#!/usr/bin/env python3
"""scripts/make_platforms.py's bad input and its writes.

Every bad input (an option's value, the output directory, an output file that is a
symbolic link, FIFO or directory) exits 2 with one line on stderr, no traceback, and leaves
the output directory as it was (a symbolic link's target too); a failure while writing
leaves the old file; --check writes nothing; a valid run writes a regular file, the same
bytes every time. Run from the repository root:
    /usr/bin/python3 tests/workflow/test_make_platforms.py
"""
import contextlib
import io
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "make_platforms.py")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import make_platforms  # noqa: E402

failures = []


def fail(case, why):
    failures.append(f"{case}: {why}")
    print(f"FAIL {case}: {why}")


def run(*args):
    try:
        p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                           timeout=30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None
    return p


def snapshot(folder):
    """{name: (kind, bytes or link target)} of every entry in `folder`, hidden ones too."""
    out = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.islink(path):
            out[name] = ("link", os.readlink(path))
        elif os.path.isfile(path):
            with open(path, "rb") as f:
                out[name] = ("file", f.read())
        else:
            out[name] = ("other", None)
    return out


def refused(case, args, watch, expect=None):
    """`args` exit 2, one stderr line (holding `expect`), no traceback, `watch` unchanged."""
    before = {w: snapshot(w) for w in watch}
    p = run(*args)
    if p is None:
        return fail(case, "hung (timeout 30 s)")
    lines = p.stderr.splitlines()
    if p.returncode != 2:
        fail(case, f"exit {p.returncode}, expected 2 (stderr {p.stderr!r})")
    if len(lines) != 1 or not lines[0].startswith("make_platforms.py: "):
        fail(case, f"expected one stderr line 'make_platforms.py: ...', got {p.stderr!r}")
    if "Traceback" in p.stderr:
        fail(case, "traceback on stderr")
    if expect and expect not in p.stderr:
        fail(case, f"stderr {p.stderr!r} does not name {expect!r}")
    if p.stdout:
        fail(case, f"stdout {p.stdout!r}, expected nothing")
    for w in watch:
        if snapshot(w) != before[w]:
            fail(case, f"{w} changed")


def bad_arguments(d):
    for value in ("0", "2", "-5", "abc", "1.5", str(make_platforms.MAX_SITES + 1),
                  "99999999999999999999999"):
        refused(f"--synthetic {value}", ["--synthetic", value, "--out", d], [d], "--synthetic")
    refused("--seed abc", ["--synthetic", "9", "--seed", "abc", "--out", d], [d], "--seed")
    refused("unknown option", ["--synthetic", "9", "--bogus", "--out", d], [d], "--bogus")
    refused("--synthetic without N", ["--out", d, "--synthetic"], [d], "--synthetic")


def bad_out(d):
    regular = os.path.join(d, "a_file")
    with open(regular, "w") as f:
        f.write("keep me\n")
    for out in ("", regular, "/dev/null", "/dev/full", "/proc/nonexist/x"):
        refused(f"--out {out!r}", ["--synthetic", "9", "--out", out], [d], "--out")
        refused(f"--check --out {out!r}", ["--check", "--synthetic", "9", "--out", out], [d],
                "--out")
    missing = os.path.join(d, "missing", "deeper")
    refused("--check, --out's folder missing", ["--check", "--synthetic", "9", "--out", missing],
            [d], "--out")
    refused("nine-city --check, --out's folder missing", ["--check", "--out", missing], [d],
            "--out")
    refused("--data missing", ["--data", os.path.join(d, "no_data"), "--out", d], [d], "--data")


def bad_targets(d):
    elsewhere = os.path.join(d, "elsewhere")
    os.mkdir(elsewhere)
    target = os.path.join(elsewhere, "target.yaml")
    with open(target, "w") as f:
        f.write("the link's target\n")
    out = os.path.join(d, "out")
    os.mkdir(out)
    name = os.path.join(out, "synthetic_9.yaml")
    watch = [out, elsewhere]
    cases = [
        ("symbolic link", lambda: os.symlink(target, name)),
        ("dangling symbolic link", lambda: os.symlink(os.path.join(elsewhere, "none"), name)),
        ("symbolic link to /dev/full", lambda: os.symlink("/dev/full", name)),
        ("FIFO", lambda: os.mkfifo(name)),
        ("directory", lambda: os.mkdir(name)),
    ]
    for kind, make in cases:
        make()
        refused(f"synthetic_9.yaml is a {kind}", ["--synthetic", "9", "--out", out], watch)
        refused(f"--check, synthetic_9.yaml is a {kind}",
                ["--check", "--synthetic", "9", "--out", out], watch)
        (os.rmdir if kind == "directory" else os.unlink)(name)
    os.symlink(target, os.path.join(out, "nine_city_full_mesh.yaml"))
    refused("nine_city_full_mesh.yaml is a symbolic link", ["--out", out], watch,
            "symbolic link")
    os.unlink(os.path.join(out, "nine_city_full_mesh.yaml"))


def valid_runs(d):
    a, b = os.path.join(d, "a"), os.path.join(d, "b", "created")
    for out in (a, b):
        p = run("--synthetic", "9", "--seed", "3", "--out", out)
        path = os.path.join(out, "synthetic_9.yaml")
        if p is None or p.returncode != 0 or p.stderr:
            return fail("valid --synthetic 9", f"{p and p.returncode} {p and p.stderr!r}")
        if p.stdout != f"wrote {path}\n":
            fail("valid --synthetic 9", f"stdout {p.stdout!r}")
        if os.path.islink(path) or not os.path.isfile(path):
            fail("valid --synthetic 9", f"{path} is not a regular file")
        if sorted(os.listdir(out)) != ["synthetic_9.yaml"]:
            fail("valid --synthetic 9", f"{out} holds {os.listdir(out)}")
    first, second = (open(os.path.join(o, "synthetic_9.yaml"), "rb").read() for o in (a, b))
    if first != second or not first.startswith(b"# GENERATED"):
        fail("deterministic", "two runs of --synthetic 9 --seed 3 differ")
    path = os.path.join(a, "synthetic_9.yaml")
    p = run("--synthetic", "9", "--seed", "3", "--out", a)
    if p.returncode != 0 or open(path, "rb").read() != first or os.path.islink(path):
        fail("rewrite", "a second run over the file changed it or failed")
    p = run("--check", "--synthetic", "9", "--seed", "3", "--out", a)
    if p.returncode != 0:
        fail("--check, up to date", f"exit {p.returncode} {p.stderr!r}")
    before = snapshot(a)
    p = run("--check", "--synthetic", "9", "--seed", "4", "--out", a)
    if p.returncode != 1 or "synthetic_9.yaml" not in p.stderr or snapshot(a) != before:
        fail("--check, out of date", f"exit {p.returncode} {p.stderr!r}, expected 1, no write")
    p = run("--check", "--synthetic", "27", "--out", a)
    if p.returncode != 1 or snapshot(a) != before:
        fail("--check, missing file", f"exit {p.returncode}, expected 1, nothing written")


def failed_writes(d):
    """A failure while generating or writing leaves the old file and no temporary file."""
    path = os.path.join(d, "synthetic_9.yaml")
    with open(path, "w") as f:
        f.write("the old file\n")

    def boom(exc):
        def raiser(*args, **kwargs):
            raise exc
        return raiser

    for case, where, what, exc, code in (
        ("MemoryError while generating", make_platforms, "synthetic", MemoryError(), 1),
        ("Ctrl-C while generating", make_platforms, "synthetic", KeyboardInterrupt(), 130),
        ("Ctrl-C while writing", make_platforms.os, "fsync", KeyboardInterrupt(), 130),
        ("disk full while writing", make_platforms.os, "fsync", OSError(28, "No space"), 2),
    ):
        saved = getattr(where, what)
        setattr(where, what, boom(exc))
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                status = make_platforms.main(["--synthetic", "9", "--out", d])
        except BaseException as e:  # noqa: B902 - reported as a failure
            status = f"raised {type(e).__name__}"
        finally:
            setattr(where, what, saved)
        if status != code:
            fail(case, f"status {status}, expected {code}")
        if len(err.getvalue().splitlines()) != 1:
            fail(case, f"stderr {err.getvalue()!r}, expected one line")
        if os.listdir(d) != ["synthetic_9.yaml"] or open(path).read() != "the old file\n":
            fail(case, f"the old file changed or a temporary file is left: {os.listdir(d)}")


def main():
    for test in (bad_arguments, bad_out, bad_targets, valid_runs, failed_writes):
        with tempfile.TemporaryDirectory() as d:
            test(d)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("make_platforms: all cases pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
