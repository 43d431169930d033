"""Music through the ALSA plugin: a plain `aplay -D audioroute` follows the route to the headset."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .logs import Alive, Marker, loud_between

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-plugin.sh"


@dataclass(frozen=True)
class PluginStart(Marker):
    """`plugin-start`: the route is the headset's A2DP; aplay starts next."""
    words: ClassVar[str] = "plugin-start"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginPlaying(Alive):
    """`plugin-playing alive|exited`: aplay, 4 s after its start."""
    words: ClassVar[str] = "plugin-playing"
    script: ClassVar[str] = SCRIPT


EVENTS = (PluginStart, PluginPlaying)


def check_plugin(guest):
    """aplay lives, and nothing of it reaches the speaker."""
    PluginStart.wait(guest, 120)
    before = guest.files.audible("hda")
    if not PluginPlaying.wait(guest, 60).alive:
        raise Failure("aplay -D audioroute exited while playing to the headset")
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("aplay -D audioroute played on the speaker while the headset was the route")


def check_heard(lines):
    """The music at the headset, from the ear's reports; the problems."""
    heard = loud_between(lines, PluginStart.key(), PluginPlaying.key())
    print(f"    aplay -D audioroute: {heard:.2f} s reached the headset")
    if heard < 1.0:
        return [f"aplay -D audioroute: only {heard:.2f} s reached the headset"]
    return []
