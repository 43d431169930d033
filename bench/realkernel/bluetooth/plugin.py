"""Music through the ALSA plugin: a plain `aplay -D audioroute` follows the route to the headset."""
from ..common import Failure
from .logs import loud_between

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-plugin.sh"


def check_plugin(guest):
    """aplay lives, and nothing of it reaches the speaker."""
    guest.wait_for("plugin-start", 120)
    before = guest.files.audible("hda")
    line = guest.wait_for("plugin-playing", 60)
    if "alive" not in line:
        raise Failure("aplay -D audioroute exited while playing to the headset")
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("aplay -D audioroute played on the speaker while the headset was the route")


def check_heard(lines):
    """The music at the headset, from the ear's reports; the problems."""
    heard = loud_between(lines, "plugin-start", "plugin-playing")
    print(f"    aplay -D audioroute: {heard:.2f} s reached the headset")
    if heard < 1.0:
        return [f"aplay -D audioroute: only {heard:.2f} s reached the headset"]
    return []
