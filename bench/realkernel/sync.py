"""The sync phase: two `audioroute play --at T` (AudioPlayer.play(atTime:)) for the same T, one tone on
the left, one on the right; where each starts in the HDA card's file."""
import array
from dataclasses import dataclass
from typing import ClassVar

from .common import Failure
from .events import Mark, Report
from .signals import RATE, SYNC_LEVEL

# The phase's guest part (bench/guest/).
GUEST_SCRIPT = "kernel/sync.sh"
# The bound: one period of the player (AudioPlayer's default periodFrames).
PERIOD_FRAMES = 1024


class SyncReady(Mark):
    """`sync-ready`: the host keeps the HDA card's file from here."""
    words, script = "sync-ready", GUEST_SCRIPT


@dataclass(frozen=True)
class SyncDone(Report):
    """`sync-done T LEFT RIGHT LEFT_LOG RIGHT_LOG`: both players ended; the time they were given, their
    exit statuses and the ends of their outputs."""
    words: ClassVar[str] = "sync-done"
    script: ClassVar[str] = GUEST_SCRIPT
    at: int
    statuses: tuple

    @classmethod
    def parse(cls, line):
        fields = cls.fields(line)
        return cls(line, int(fields[0]), (int(fields[1]), int(fields[2])))


EVENTS = (SyncReady, SyncDone)


def first_loud(samples, channel, threshold=SYNC_LEVEL // 4):
    """The first frame of interleaved S16 stereo `samples` whose `channel` is above `threshold`, or None."""
    return next((i // 2 for i in range(channel, len(samples), 2) if abs(samples[i]) > threshold), None)


def check_sync(guest):
    """Both tones reach the card's file, and start within one period of each other."""
    files = guest.files
    SyncReady.wait(guest, 120)
    files.capture("hda")
    done = SyncDone.wait(guest, 60)
    samples = array.array("h", bytes(files.take("hda")))
    if done.statuses != (0, 0):
        raise Failure(f"sync: audioroute play --at exited {done.statuses[0]} (left) and {done.statuses[1]} (right): {done.report[:700]}")
    left, right = first_loud(samples, 0), first_loud(samples, 1)
    if left is None or right is None:
        raise Failure(f"sync: the HDA card's file has no {'left' if left is None else 'right'} tone "
                      f"({len(samples) // 2} frames kept)")
    spread = right - left
    print(f"    two players started for the same time: the left tone at frame {left}, the right at {right} of the "
          f"card's file: {spread:+d} frames ({spread * 1000 / RATE:+.2f} ms), the bound {PERIOD_FRAMES} (a period)")
    if abs(spread) > PERIOD_FRAMES:
        raise Failure(f"sync: the two tones start {abs(spread)} frames apart in the HDA card's file, more than a period "
                      f"({PERIOD_FRAMES})")
    return spread
