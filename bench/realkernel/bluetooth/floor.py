"""The first frame's floor: per Connect with no player, a plain aplay on BlueALSA's PCM, started
by a client when it hears RouteChanged (the moment the player moves); timing reads its reports."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .logs import Alive, Stamp

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-floor.sh"


@dataclass(frozen=True)
class FloorReady(Stamp):
    """`floor-ready N UPTIME`: the client's monitor runs; the Connect comes next."""
    words: ClassVar[str] = "floor-ready"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class FloorOpen(Stamp):
    """`floor-open N NS` (guest-stamp): aplay's exec, on CLOCK_MONOTONIC."""
    words: ClassVar[str] = "floor-open"
    script: ClassVar[str] = SCRIPT
    nanoseconds: ClassVar[bool] = True


@dataclass(frozen=True)
class FloorTrigger(Stamp):
    """`floor-trigger N NS`: when the client had RouteChanged (its monitor's stamp)."""
    words: ClassVar[str] = "floor-trigger"
    script: ClassVar[str] = SCRIPT
    nanoseconds: ClassVar[bool] = True


@dataclass(frozen=True)
class FloorPlaying(Alive):
    """`floor-playing N alive|exited`: the floor's aplay, 4 s after its start."""
    words: ClassVar[str] = "floor-playing"
    script: ClassVar[str] = SCRIPT


EVENTS = (FloorReady, FloorOpen, FloorTrigger, FloorPlaying)


def check_floor(guest, cycles, headset):
    """Each of the floor's aplays still plays 4 s after its start."""
    for n in range(1, cycles + 1):
        if not FloorPlaying.wait(guest, 120, n).alive:
            raise Failure(f"floor {n}: aplay -D bluealsa:DEV={headset},PROFILE=a2dp exited within 4 s of its start "
                          f"(its output: the log aplay-floor-{n})")
    print(f"    {cycles} plain aplays on the headset's BlueALSA PCM, each started at RouteChanged")
