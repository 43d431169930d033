"""The calls: music on the headset's A2DP, then a playAndRecord + voiceChat session that takes the
route to HFP; when it ends, the music comes back on A2DP. First with `audioroute play` as both
apps (the call phase), then with plain aplay through the plugin (the plugin call phase)."""
from ..common import Failure
from .logs import logged, loud_between

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-calls.sh"


def check_call(guest):
    """`audioroute play` as the call: nothing on the speaker while it lasts; its end printed."""
    guest.wait_for("call-start", 120)
    before = guest.files.audible("hda")
    print("    " + guest.wait_for("call-ended", 60)[:200])
    guest.wait_for("call-after", 60)
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("something played on the speaker during the call")


def check_plugin_call(guest):
    """aplay as the call: the music's aplay lives through it, and nothing reaches the speaker."""
    guest.wait_for("plugin-call-start", 120)
    # The plugin's call finds the headset's A2DP PCM busy (BlueALSA's PCMs are exclusive, and
    # the music holds it): it activates its session, the tower interrupts the music and
    # routes to HFP, and the call opens the SCO PCM, whose link btvirt refuses (reported).
    before = guest.files.audible("hda")
    for words in ("plugin-call-during", "plugin-call-ended", "plugin-call-after"):
        line = guest.wait_for(words, 60)
        print("    " + line[:160])
        if words != "plugin-call-ended" and line.split()[1:2] != ["alive"]:
            raise Failure(f"the music's aplay did not live through the plugin's call: {line[:200]}")
    if guest.files.audible("hda") - before > 0.05:
        raise Failure("something played on the speaker during the plugin's call")


def check_route_changes(changes, headset):
    """Both calls took the route to HFP, and it did not stay there; the problems."""
    hfp = f"bt:{headset}:hfp"
    problems = []
    to_hfp = [c for c in changes if c[1] == [hfp]]
    print(f"    the calls (audioroute play, then aplay -D audioroute): route changes to {hfp}: {to_hfp}")
    if len(to_hfp) < 2:
        problems.append(f"the calls' sessions took the route to HFP {len(to_hfp)} times, expected twice (the player's "
                        f"and the plugin's): {changes}")
    last = changes[-1][1] if changes else None
    if last == [hfp]:
        problems.append("the headset was left in HFP at the end")
    return problems


def check_music_back(lines):
    """After each call, the music at the headset again, from the ear's reports; the problems."""
    problems = []
    for start, end, who in (("call-ended", "call-after", "audioroute play"), ("plugin-call-ended", "plugin-call-after", "aplay")):
        heard = loud_between(lines, start, end)
        print(f"    the music ({who}) after the call: {heard:.2f} s reached the headset")
        if heard < 1.0:
            problems.append(f"after the call the music ({who}) did not come back to the headset ({heard:.2f} s)")
            if who == "aplay":
                print("    the music's trace (AUDIOROUTE_DEBUG), its last lines:")
                for line in [l for l in logged(lines, "aplay-call-music") if l.startswith("audioroute ")][-12:]:
                    print("      " + line[:160])
    return problems


def print_trace(lines):
    """The plugin's call, its trace."""
    trace = [l for l in logged(lines, "aplay-call") if l.startswith("audioroute ")]
    print("    the plugin's call, its trace (AUDIOROUTE_DEBUG):")
    for line in trace[:12]:
        print("      " + line[:160])


def check_sco(lines):
    """Why the calls ended as they did: btvirt's refusal of the SCO link; the problems."""
    problems = []
    sco = [l for l in lines if l.startswith("ear ") and ("-16000-1" in l or "-8000-1" in l)]
    refused = [l for l in logged(lines, "bluealsa-src") if "SCO link" in l]
    print(f"    SCO: {len(sco)} reports of voice frames at the headset; BlueALSA: {refused[:1] or 'no SCO error'}")
    # btvirt 5.66 refuses SCO links (docs/bluetooth.md), so both calls fail, and that refusal
    # must be why: a call that fails with the SCO link up, or ends well with no voice frame
    # at the headset, is a fault of ours.
    for words, who in (("call-ended", "audioroute play"), ("plugin-call-ended", "aplay -D audioroute")):
        said = [l.split() for l in lines if l.startswith(words + " ")]
        status = said[0][1] if said and len(said[0]) > 1 else "?"
        if status != "0" and not refused:
            problems.append(f"the call ({who}) ended {status}, and BlueALSA did not refuse the SCO link: the failure is not btvirt's")
        if status == "0" and not sco:
            problems.append(f"the call ({who}) ended 0, but no voice frame reached the headset")
    return problems
