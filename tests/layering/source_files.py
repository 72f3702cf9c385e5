"""The C++ sources the layering checks read (check_layers.py, check_clock.py)."""
import os


def source_files(folder):
    """(path, path relative to `folder`) of every .h and .cpp below `folder`, in name order."""
    for dirpath, dirnames, files in os.walk(folder):
        dirnames.sort()
        for name in sorted(files):
            if name.endswith((".h", ".cpp")):
                path = os.path.join(dirpath, name)
                yield path, os.path.relpath(path, folder)


def numbered_lines(path):
    """(line number from 1, line) of the file at `path`."""
    with open(path, encoding="utf-8") as f:
        yield from enumerate(f, 1)
