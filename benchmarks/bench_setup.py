"""What the benchmark scripts share: the repository root as the working directory,
aggnet_bench's path in a build, and the synthetic platforms (a directory given, or
generated into a temporary one)."""
import os
import subprocess
import sys


def enter_repository():
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def bench_path(build):
    return os.path.join(build, "benchmarks", "aggnet_bench")


def synthetic_platforms(given, tmp, sizes=(9, 243)):
    """`given`, or `tmp` with scripts/make_platforms.py's synthetic platforms of `sizes`."""
    if given:
        return given
    for n in sizes:
        subprocess.run([sys.executable, "scripts/make_platforms.py", "--synthetic", str(n),
                        "--seed", "1", "--out", tmp], check=True, capture_output=True)
    return tmp
