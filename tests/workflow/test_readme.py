#!/usr/bin/python3
"""README.md as a reader uses it.

  examples:  the example block after "Examples:" pasted in order, each command run with the
             `aggnet` given, in a temporary directory that links the repository's top-level
             folders (as scripts/doc_commands.py does): every one exits 0. (Its `--vcd run.fst`
             was refused, exit 2: run.gtkw, written by the `--vcd run.vcd` example before it,
             is the view of another waveform.)
  run-table: the rows the README says `aggnet run`'s table ends with are the rows of a run's
             summary, in order (it said the table ended with the rounds and the time to eps;
             the bound, memory and co-located rows follow them).

    /usr/bin/python3 tests/workflow/test_readme.py --aggnet build/apps/aggnet examples
    /usr/bin/python3 tests/workflow/test_readme.py --aggnet build/apps/aggnet run-table
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
# Files an example names that the reader brings: its line is not run.
PLACEHOLDERS = {"my_schedule.yaml": "the reader's own schedule file"}
# Summary rows only some runs have (README names them with when).
OPTIONAL_ROWS = {"co-located reference", "functional checks"}


def readme():
    with open(README, encoding="utf-8") as f:
        return f.read()


def example_lines(text):
    """The commands of the ```sh block after "Examples:", comments stripped."""
    start = text.index("Examples:\n\n```sh\n") + len("Examples:\n\n```sh\n")
    block = text[start:text.index("\n```", start)]
    return [re.sub(r"\s+#.*$", "", line) for line in block.split("\n") if line.strip()]


def examples(aggnet):
    lines = example_lines(readme())
    skipped = set()
    with tempfile.TemporaryDirectory(prefix="aggnet-readme-") as tmp:
        for name in os.listdir(ROOT):
            if not name.startswith(".") and not name.startswith("build"):
                os.symlink(os.path.join(ROOT, name), os.path.join(tmp, name))
        for line in lines:
            placeholder = [p for p in PLACEHOLDERS if p in line]
            if placeholder:
                skipped.update(placeholder)
                continue
            cmd = line.replace("./build/apps/aggnet", aggnet)
            proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp,
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                sys.exit(f"FAIL: README example `{line}`: exit {proc.returncode}\n{proc.stderr}")
            print(f"ok: {line}")
    if skipped != set(PLACEHOLDERS):
        sys.exit(f"FAIL: placeholders no example names any more: {set(PLACEHOLDERS) - skipped}")


def summary_rows(aggnet):
    """The row names of a default run's summary ("rounds to eps 0.001" -> "rounds to eps")."""
    out = subprocess.run([aggnet, "run", "--gradient", "16MiB"], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out[out.index("\nSummary"):].split("\n")[2:]:
        m = re.match(r"  (\S.*?)\s{2,}", line)
        if m:
            rows.append(re.sub(r" [0-9.e-]+$", "", m.group(1)))
    return rows


def readme_rows(text):
    """The backticked row names of the README's "ends with its summary" sentence."""
    for paragraph in text.split("\n\n"):
        flat = " ".join(paragraph.split())
        if "ends with its summary" in flat:
            part = flat[flat.index("ends with its summary"):flat.index(" test checks")]
            return [w for w in re.findall(r"`([^`]+)`", part)
                    if not w.startswith("-") and w != "readme_run_table"]
    sys.exit("FAIL: README.md says nowhere what the run table ends with")


def run_table(aggnet):
    run = summary_rows(aggnet)
    listed = readme_rows(readme())
    if [r for r in listed if r in run] != run or set(listed) - set(run) != OPTIONAL_ROWS:
        sys.exit(f"FAIL: README lists the summary rows {listed}\n"
                 f"  a run prints {run}\n  (rows only some runs have: {sorted(OPTIONAL_ROWS)})")
    print(f"ok: README lists the {len(run)} summary rows a run prints, and {sorted(OPTIONAL_ROWS)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--aggnet", required=True)
    ap.add_argument("check", choices=["examples", "run-table"])
    args = ap.parse_args()
    aggnet = os.path.abspath(args.aggnet)
    (examples if args.check == "examples" else run_table)(aggnet)


if __name__ == "__main__":
    main()
