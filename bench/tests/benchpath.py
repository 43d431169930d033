"""Puts bench/ on sys.path, so that the tests import the bench's package (realkernel) as the entry
points do; and where the tests' fixtures are."""
import os
import sys

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
GUEST = os.path.join(BENCH, "guest")
FIXTURES = os.path.join(BENCH, "tests", "fixtures")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)
