"""A guest without QEMU, for the phases' checks: its reports (recorded, or written by a test) and,
before each, what the HDA card's file gained (synthesized), as Guest and its Files give them."""
import contextlib
import io
import os

import benchpath
from realkernel.common import Failure
from realkernel.harness import report_lines


def recorded(name):
    """A recorded console's reports (bench/tests/fixtures/NAME), as Guest.lines() reads them."""
    with open(os.path.join(benchpath.FIXTURES, name), errors="replace") as f:
        return report_lines(f.read())


class FakeFiles:
    """Guest.files for the HDA card: capture, mark, take."""

    def __init__(self):
        self.captured = None

    def capture(self, name):
        assert name == "hda", name
        self.captured = bytearray()

    def mark(self, name):
        return len(self.captured) // 4

    def take(self, name):
        data, self.captured = self.captured, None
        return data

    def gain(self, data):
        if self.captured is not None:
            self.captured += data


class FakeGuest:
    """`script`: (S16 stereo bytes the HDA card's file gains, then the report line), in order.
    wait_for(words) plays the script up to the first report that starts with `words`, as the
    guest's console and files would have grown by then; a `fail` report before it fails as the
    guest's does."""

    def __init__(self, script):
        self.script, self.played = script, 0
        self.files = FakeFiles()
        self.commands = []

    def wait_for(self, words, seconds=None):
        for index, (_, line) in enumerate(self.script):
            if line == words or line.startswith(words + " "):
                for data, _ in self.script[self.played:index + 1]:
                    self.files.gain(data)
                self.played = max(self.played, index + 1)
                return line
            if line.startswith("fail "):
                raise Failure("the guest: " + line[5:])
        raise Failure(f"the guest did not say '{words}' within {seconds} s")

    def lines(self):
        return [line for _, line in self.script]

    def command(self, execute, **arguments):
        self.commands.append((execute, arguments))


def quietly(check, *arguments):
    """A check's result and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = check(*arguments)
    return result, out.getvalue()
