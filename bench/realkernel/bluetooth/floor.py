"""The first frame's floor: per Connect with no player, a plain aplay on BlueALSA's PCM, started
by a client when it hears RouteChanged (the moment the player moves); timing reads its reports."""
from ..common import Failure

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-floor.sh"


def check_floor(guest, cycles, headset):
    """Each of the floor's aplays still plays 4 s after its start."""
    for n in range(1, cycles + 1):
        line = guest.wait_for(f"floor-playing {n}", 120)
        if "alive" not in line.split():
            raise Failure(f"floor {n}: aplay -D bluealsa:DEV={headset},PROFILE=a2dp exited within 4 s of its start "
                          f"(its output: the log aplay-floor-{n})")
    print(f"    {cycles} plain aplays on the headset's BlueALSA PCM, each started at RouteChanged")
