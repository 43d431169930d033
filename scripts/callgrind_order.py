"""The link order of one executable's functions, from callgrind's output files.

Shared by scripts/profile-daemon-order and scripts/profile-ucm-helper-order: every
function of BINARY that ran, by symbol, written to an order file that
lld's --symbol-ordering-file reads (scripts/build-daemon): the common path's first."""
import glob
import os
import re


def wrapper(out, binary):
    """The text of a shell wrapper that runs `binary` under callgrind, its files in `out`."""
    return ("#!/bin/sh\nexec valgrind --tool=callgrind --dump-instr=no --compress-strings=no --compress-pos=no "
            "--demangle=no --callgrind-out-file=%s/callgrind.%%p %s \"$@\"\n" % (out, binary))


def functions(paths, binary):
    """The functions of `binary` that the callgrind files `paths` saw, by symbol."""
    names, current = set(), None
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("ob="):
                    current = line[3:].strip()
                elif line.startswith("fn=") and current and os.path.realpath(current) == os.path.realpath(binary):
                    name = re.sub(r"'\d+$", "", line[3:].strip())  # callgrind's recursion marks
                    if not name.startswith("0x"):  # private helpers have no symbol to name
                        names.add(name)
    return names


def write(out, binary, target):
    """Writes the functions of `binary` that the callgrind files in `out` saw to `target`;
    their count. Those of the first dumps (`callgrind.<pid>.1`, taken with `callgrind_control
    -d` after the common path ran: start, routes, clients) come first, then the rest (fuzzing,
    overflows, other start modes): the common path's code then fills the fewest 64 KiB windows,
    and a daemon that never meets the rare paths does not map them."""
    paths = glob.glob(os.path.join(out, "callgrind.*"))
    first = functions([p for p in paths if p.endswith(".1")], binary)
    names = functions(paths, binary)
    assert names, "callgrind saw no function of %s" % binary
    # Each part sorted: a sorted file changes only where the set does.
    with open(target, "w") as f:
        f.write("\n".join(sorted(first) + sorted(names - first)) + "\n")
    return len(names)
