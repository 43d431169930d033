"""Synthesized signals for the bench's tests: what the cards' files would hold."""
import array
import math

import benchpath  # noqa: F401  (bench/ on sys.path)
from realkernel.signals import RATE, SIGNAL_LEVEL, sequence_bits

_BITS = None


def bits():
    """The sequence, computed once for all the tests (about a second)."""
    global _BITS
    if _BITS is None:
        _BITS = sequence_bits()
    return _BITS


def signal(place, frames, gain=1.0):
    """`frames` of the signal from `place`, at SIGNAL_LEVEL times `gain` (a card's mixer)."""
    level = int(SIGNAL_LEVEL * gain)
    return array.array("h", (level if b else -level for b in bits()[place:place + frames]))


def silence(frames):
    return array.array("h", bytes(2 * frames))


def tone(frequency, seconds, level, start=0):
    return array.array("h", (int(level * math.sin(2 * math.pi * frequency * (start + n) / RATE)) for n in range(int(RATE * seconds))))


def mix(*parts):
    """Sample-wise sum of equally long mono parts."""
    return array.array("h", (max(-32768, min(32767, sum(values))) for values in zip(*parts)))


def stereo(samples, right=None):
    """S16 stereo frames as bytes: `samples` on the left, `right` (or the same) on the right."""
    right = samples if right is None else right
    frames = array.array("h", bytes(4 * len(samples)))
    frames[0::2], frames[1::2] = samples, right
    return frames.tobytes()
