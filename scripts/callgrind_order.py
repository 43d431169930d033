"""The link order of one executable's functions, from callgrind's output files.

Shared by scripts/profile-daemon-order and scripts/profile-ucm-helper-order: every
function of BINARY that ran, by symbol, written sorted to an order file that
lld's --symbol-ordering-file reads (scripts/build-daemon)."""
import glob
import os
import re


def wrapper(out, binary):
    """The text of a shell wrapper that runs `binary` under callgrind, its files in `out`."""
    return ("#!/bin/sh\nexec valgrind --tool=callgrind --dump-instr=no --compress-strings=no --compress-pos=no "
            "--demangle=no --callgrind-out-file=%s/callgrind.%%p %s \"$@\"\n" % (out, binary))


def write(out, binary, target):
    """Writes the functions of `binary` that the callgrind files in `out` saw to `target`;
    their count."""
    names, current = set(), None
    for path in glob.glob(os.path.join(out, "callgrind.*")):
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("ob="):
                    current = line[3:].strip()
                elif line.startswith("fn=") and current and os.path.realpath(current) == os.path.realpath(binary):
                    name = re.sub(r"'\d+$", "", line[3:].strip())  # callgrind's recursion marks
                    if not name.startswith("0x"):  # private helpers have no symbol to name
                        names.add(name)
    assert names, "callgrind saw no function of %s" % binary
    # Sorted: the linker places every listed function together whatever their order,
    # and a sorted file changes only where the set does.
    with open(target, "w") as f:
        f.write("\n".join(sorted(names)) + "\n")
    return len(names)
