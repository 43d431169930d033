"""Music through the ALSA plugin: a plain `aplay -D audioroute` follows the route to the headset."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from ..hardware import HardwareMixer, HardwareValues, check_volume
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


@dataclass(frozen=True)
class PluginVolumeMixer(HardwareMixer):
    """`plugin-volume-mixer A2DP|SGET|CGET`: BlueALSA's control plugin's `A2DP` element (the
    headset's volume) as amixer shows it, after aplay."""
    words: ClassVar[str] = "plugin-volume-mixer"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginVolume(HardwareValues):
    """`plugin-volume JSON`: `audioroute hardware --json` with the headset's A2DP the route."""
    words: ClassVar[str] = "plugin-volume"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class PluginVolumeMixerSet(PluginVolumeMixer):
    """`plugin-volume-mixer-set ...`: the element after `amixer sset A2DP 50%`."""
    words: ClassVar[str] = "plugin-volume-mixer-set"


@dataclass(frozen=True)
class PluginVolumeSet(PluginVolume):
    """`plugin-volume-set JSON`: `audioroute hardware --json` after it."""
    words: ClassVar[str] = "plugin-volume-set"


@dataclass(frozen=True)
class PluginVolumeRestored(PluginVolumeMixer):
    """`plugin-volume-restored ...`: the element once put back, for the phases after."""
    words: ClassVar[str] = "plugin-volume-restored"


EVENTS = (PluginStart, PluginPlaying, PluginVolumeMixer, PluginVolume, PluginVolumeMixerSet, PluginVolumeSet, PluginVolumeRestored)


def check_plugin(guest):
    """aplay lives, and nothing of it reaches the speaker."""
    PluginStart.wait(guest, 120)
    before = guest.files.audible("hda")
    if not PluginPlaying.wait(guest, 60).alive:
        raise Failure("aplay -D audioroute exited while playing to the headset")
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("aplay -D audioroute played on the speaker while the headset was the route")
    # BlueALSA's volume: outputVolume is alsamixer's value of the A2DP element, before and after
    # amixer sets it to the middle of its range.
    mixer = PluginVolumeMixer.wait(guest, 60)
    volume = PluginVolume.wait(guest, 60)
    check_volume("the headset's A2DP", volume, mixer, PluginVolumeMixerSet.wait(guest, 60), PluginVolumeSet.wait(guest, 60))
    restored = PluginVolumeRestored.wait(guest, 60)
    if restored.raw != mixer.raw:
        raise Failure(f"the headset's A2DP volume was not put back: raw {restored.raw}, it was {mixer.raw}")


def check_heard(lines):
    """The music at the headset, from the ear's reports; the problems."""
    heard = loud_between(lines, PluginStart.key(), PluginPlaying.key())
    print(f"    aplay -D audioroute: {heard:.2f} s reached the headset")
    if heard < 1.0:
        return [f"aplay -D audioroute: only {heard:.2f} s reached the headset"]
    return []
