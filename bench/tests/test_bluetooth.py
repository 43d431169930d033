"""The Bluetooth bench's phases: each names its guest script, which parses and which the image
packs where bluetooth-checks.sh sources it; the checks of its logs (check_logs) on a recorded run
(fixtures/bluetooth-run.console) and on reports changed to a fault; what reached the headset
from guest-ear's reports."""
import os
import re
import subprocess
import unittest

from benchpath import GUEST
from fake_guest import FakeGuest, quietly, recorded
from realkernel.bluetooth import calls, cycles, floor, image, pairing, plugin, restart, system
from realkernel.bluetooth.timing import print_timing
from realkernel.common import Failure
from realkernel.bluetooth.logs import ear_at, first_ear_after, loud_between
from realkernel.bluetooth_bench import check_logs

HEADSET = "00:AA:01:01:00:01"  # "addresses computer 00:AA:01:00:00:00 headset 00:AA:01:01:00:01"
COMPUTER = "00:AA:01:00:00:00"
A2DP = f"bt:{HEADSET}:a2dp"
# What the HDA card played before a report, where the run's checks read it (synthesized: the
# console does not hold the card's file): in the system instance's phase, each player's second
# on the speaker before the headset connects.
SPEAKER = {"sys-play-ready": 1.0, "sys-aplay-ready": 1.0}


class Speaker:
    """Guest.files for the Bluetooth checks: audible() is the seconds of tone the HDA card had
    played by the last report the guest was waited for."""

    def __init__(self, guest):
        self.guest = guest

    def gain(self, seconds):
        pass

    def audible(self, name):
        assert name == "hda", name
        return sum(seconds for seconds, _ in self.guest.script[:self.guest.played])


def guest(lines, loud=SPEAKER, changed=None):
    """A FakeGuest on a console's reports: before each report whose words are in `loud`, the
    speaker played that many seconds; `changed`: {index: the report that replaces the line}."""
    changed = changed or {}
    lines = [changed.get(i, line) for i, line in enumerate(lines)]
    fake = FakeGuest([(loud.get(line.split()[0] if line else "", 0.0), line) for line in lines])
    fake.files = Speaker(fake)
    return fake


def silenced(lines, start, end):
    """The ear's reports as if nothing loud reached the headset between two reports: each file's
    loud count, from `start` on, lowered by what that file gained by `end`."""
    first, last = at(lines, start), at(lines, end)
    loud = {}  # each file's loud count at its last report before `start`, then before `end`
    gained = {}
    for i, line in enumerate(lines[:last]):
        fields = line.split()
        if len(fields) == 5 and fields[0] == "ear":
            if i < first:
                loud[fields[1]] = int(fields[4])
            gained[fields[1]] = int(fields[4]) - loud.get(fields[1], 0)
    def lowered(i, line):
        fields = line.split()
        if i > first and len(fields) == 5 and fields[0] == "ear":
            return " ".join(fields[:4] + [str(int(fields[4]) - gained.get(fields[1], 0))])
        return line
    return [lowered(i, line) for i, line in enumerate(lines)]


def at(lines, words):
    """The index of the first report that starts with `words`."""
    return next(i for i, line in enumerate(lines) if line == words or line.startswith(words + " "))


class GuestScripts(unittest.TestCase):
    def test_each_phase_names_its_guest_script_which_parses(self):
        for phase in (pairing, *image.PHASES):
            with self.subTest(phase.__name__):
                path = os.path.join(GUEST, phase.SCRIPT)
                self.assertTrue(os.path.isfile(path), f"{phase.__name__}.SCRIPT: no {path}")
                result = subprocess.run(["/bin/busybox", "sh", "-n", path], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, f"busybox sh -n {phase.SCRIPT}: {result.stderr}")

    def test_the_checks_source_the_scripts_the_image_packs_in_the_phases_order(self):
        packed = image.phase_files()
        # The order the guest ran them in when they were one script.
        self.assertEqual([os.path.basename(host) for host, _ in packed],
                         ["bluetooth-cycles.sh", "bluetooth-floor.sh", "bluetooth-plugin.sh", "bluetooth-calls.sh",
                          "bluetooth-restart.sh", "bluetooth-system.sh"])
        self.assertEqual(re.findall(r"^\. (\S+)$", image.bluetooth_init(), re.M), [target for _, target in packed])
        self.assertNotIn("@BT_PHASES@", image.bluetooth_init())


class Phases(unittest.TestCase):
    """Each phase's check on the recorded run, as the bench follows the guest: it passes; and on
    the same run with a report (or the speaker) changed to a fault: it fails, naming it."""
    lines = recorded("bluetooth-run.console")

    def fails(self, check, changed, pattern, *arguments, loud=SPEAKER):
        with self.assertRaisesRegex(Failure, pattern):
            quietly(check, guest(self.lines, loud, changed), *arguments)

    def replaced(self, words, old, new):
        index = at(self.lines, words)
        self.assertIn(old, self.lines[index])
        return {index: self.lines[index].replace(old, new, 1)}

    def test_pairing(self):
        (headset, computer), printed = quietly(pairing.check_pairing, guest(self.lines))
        self.assertEqual((headset, computer), (HEADSET, COMPUTER))
        self.assertEqual(printed, "    quirk 1 attempt 1 Error org.bluez.Error.Failed: br-connection-unknown\n")
        self.fails(pairing.check_pairing, {at(self.lines, "addresses"): "addresses computer"}, "'addresses': 4 fields expected")
        self.fails(pairing.check_pairing, {at(self.lines, "paired"): ""}, "the guest did not say 'paired'")

    def test_cycles(self):
        fake = guest(self.lines)
        for n in range(1, 6):
            _, printed = quietly(cycles.check_cycle, fake, n, HEADSET, COMPUTER)
            how = "headset's side" if n in (2, 4) else "computer's side" if n != 5 else None
            self.assertIn(f"Disconnect on the {how}" if how else "the headset's bluealsa killed", printed)
            self.assertIn("the player paused; the speaker played 0.00 s after it", printed)
        self.fails(cycles.check_cycle, self.replaced("bt-disconnected 1", "Speaker paused", "Speaker playing"),
                   r"cycle 1: after the disconnect \(computer\) the player does not say paused", 1, HEADSET, COMPUTER)
        self.fails(cycles.check_cycle, {}, r"cycle 1: the speaker played 0.40 s after the headset went", 1, HEADSET, COMPUTER,
                   loud={"bt-disconnected": 0.4})
        # The headset's HFP port gone from its ports while connected.
        self.fails(cycles.check_cycle, self.replaced("bt-connected 1", '"type": "bluetoothHFP"', '"type": "bluetoothHFPx"'),
                   "'bt-connected 1': the headset's ports are", 1, HEADSET, COMPUTER)
        self.fails(cycles.check_cycle, self.replaced("bt-connected 1", f"bt:{HEADSET}:hfp", f"bt:{COMPUTER}:hfp"),
                   "'bt-connected 1': the computer itself", 1, HEADSET, COMPUTER)
        self.fails(cycles.check_cycle, {at(self.lines, "bt-connected 1"): "bt-connected 1 Error: no daemon"},
                   "'bt-connected 1': `audioroute ports --json` printed no JSON: Error: no daemon", 1, HEADSET, COMPUTER)
        self.fails(cycles.check_cycle, self.replaced("bt-disconnected 1", " ports ", " "), "'bt-disconnected 1': no ports",
                   1, HEADSET, COMPUTER)

    def test_floor(self):
        _, printed = quietly(floor.check_floor, guest(self.lines), 5, HEADSET)
        self.assertEqual(printed, "    5 plain aplays on the headset's BlueALSA PCM, each started at RouteChanged\n")
        self.fails(floor.check_floor, self.replaced("floor-playing 3", "alive", "exited"),
                   "floor 3: aplay -D bluealsa:DEV=00:AA:01:01:00:01,PROFILE=a2dp exited", 5, HEADSET)

    def test_plugin(self):
        quietly(plugin.check_plugin, guest(self.lines))
        self.fails(plugin.check_plugin, self.replaced("plugin-playing", "alive", "exited"), "aplay -D audioroute exited")
        self.fails(plugin.check_plugin, {}, "played on the speaker while the headset was the route", loud={"plugin-playing": 0.1})
        # BlueALSA's A2DP volume, recorded at 127 of 0..127 (0 dB of -96..0 dB), then at raw 64 (-9.75 dB).
        self.fails(plugin.check_plugin, self.replaced("plugin-volume-set", '"outputVolume": 0.67', '"outputVolume": 0.97'),
                   r"the headset's A2DP \(after amixer sset 50%\): outputVolume 0.97\d*, alsamixer's value of 'A2DP' is 0.6798")
        self.fails(plugin.check_plugin, self.replaced("plugin-volume-restored", "Front Left: Playback 127 [", "Front Left: Playback 0 ["),
                   "the headset's A2DP volume was not put back: raw 0, it was 127")

    def test_calls(self):
        _, printed = quietly(calls.check_call, guest(self.lines))
        self.assertTrue(printed.startswith("    call-ended 1 audioroute: error: snd_pcm_set_params"), printed)
        self.fails(calls.check_call, {}, "something played on the speaker during the call", loud={"call-after": 0.1})
        _, printed = quietly(calls.check_plugin_call, guest(self.lines))
        self.assertIn("    plugin-call-ended 1\n", printed)
        self.fails(calls.check_plugin_call, self.replaced("plugin-call-after", "alive", "exited"),
                   "the music's aplay did not live through the plugin's call: plugin-call-after exited")
        self.fails(calls.check_plugin_call, {}, "during the plugin's call", loud={"plugin-call-ended": 0.1})

    def test_restart(self):
        quietly(restart.check_restart, guest(self.lines), HEADSET, COMPUTER)
        self.fails(restart.check_restart, self.replaced("daemon-after", "alive", "dead"), "audiorouted did not answer",
                   HEADSET, COMPUTER)
        self.fails(restart.check_restart, self.replaced("btd-back", '"type": "bluetoothA2DP"', '"type": "bluetoothA2DPx"'),
                   "'btd-back': the headset's ports are", HEADSET, COMPUTER)
        # A player stopped with SIGKILL is noted, not a failure.
        stuck = at(self.lines, "btd-stopped") - 1
        _, printed = quietly(restart.check_restart, guest(self.lines, changed={stuck: "stuck aplay-music pipe_read"}),
                             HEADSET, COMPUTER)
        self.assertIn("note: a player outlived its SIGTERM and was killed: aplay-music pipe_read", printed)

    def test_system(self):
        _, printed = quietly(system.check_system, guest(self.lines))
        self.assertIn("    audioroute play --system: 1.00 s on the speaker before the headset connected; with the route on the "
                      "headset, 0.00 s on the speaker in 3 s\n", printed)
        self.fails(system.check_system, self.replaced("system-daemon", "Uid: 998 998", "Uid: 0 0"),
                   "does not run as the user audioroute")
        self.fails(system.check_system, self.replaced("system-daemon", "session-bus none", "session-bus answers"),
                   "a daemon still answers on the session bus")
        self.fails(system.check_system, self.replaced("system-daemon", "session-bus none files", "files"),
                   "'system-daemon': session-bus missing")
        self.fails(system.check_system, self.replaced("system-daemon", '"builtInSpeaker"', '"builtInSpeakerx"'),
                   "lists no speaker")
        self.fails(system.check_system, {}, "audioroute play --system did not play on the speaker before the headset connected",
                   loud={"sys-aplay-ready": 1.0})
        self.fails(system.check_system, {}, "aplay -D audioroute played 0.20 s on the speaker while the route was the headset",
                   loud=dict(SPEAKER, **{"sys-aplay-heard": 0.2}))
        self.fails(system.check_system, self.replaced("sys-aplay-heard", "alive", "exited"), "aplay -D audioroute exited")
        self.fails(system.check_system, self.replaced("sys-play-after", "paused", "playing"),
                   "after the disconnect the player does not say paused")


def connected(wall):
    """dbus-monitor's lines (its log btsignals) for the headset's Device1.Connected turning true at a wall time."""
    return [f"log btsignals signal time={wall:.6f} sender=:1.1 -> destination=(null destination) serial=1 "
            "path=/org/bluez/hci0/dev_00_AA_01_01_00_01; interface=org.freedesktop.DBus.Properties; member=PropertiesChanged",
            'log btsignals string "org.bluez.Device1"', "log btsignals array [", "log btsignals dict entry(",
            'log btsignals string "Connected"', "log btsignals variant             boolean true", "log btsignals )", "log btsignals ]"]


def arrival(seconds):
    """The monitor's route change to the headset's A2DP at a CLOCK_MONOTONIC time."""
    return (f'log monitor {{"monotonicNs": {round(seconds * 1e9)}, "event": "routeChange", "reason": "newDeviceAvailable", '
            f'"previous": {{"inputs": [], "outputs": []}}, "current": {{"inputs": [], "outputs": ["{A2DP}"]}}}}')


class Timing(unittest.TestCase):
    """The timing on a synthesized one-cycle run: the wall clock is 999999900 s ahead of
    CLOCK_MONOTONIC (guest-ear's clocks), so dbus-monitor's 1000000010.5 is 110.5 s."""
    lines = ["clocks 1000000000000000000 100000000000", "ear /run/ear-48000-2.raw 109000000000 0 0",
             "bt-ready 1 110.00", *connected(1000000010.5), arrival(111.2), "ear /run/ear-48000-2.raw 111500000000 2400 0",
             "ear /run/ear-48000-2.raw 112000000000 4800 100",
             "floor-ready 1 120.00", *connected(1000000020.5), "floor-trigger 1 121000000000", "floor-open 1 121100000000",
             "ear /run/ear-48000-2.raw 122000000000 9600 200", "sys-play-ready 130.0", "sys-aplay-ready 140.0"]

    def test_from_connected_to_the_route_change_and_the_first_frame(self):
        _, printed = quietly(print_timing, self.lines, HEADSET, 1)
        # Connected at 110.5 s: no ServicesResolved nor PCM signal; RouteChanged at 111.2 s, the
        # first loud frame at 112.0 s (at 111.5 s, frames but none loud).
        self.assertIn("    cycle 1:      -       -     700    1500\n", printed)
        # The player starts at its RouteChanged: its first frame 800 ms on. The floor's Connected at
        # 120.5 s, its client's RouteChanged at 121.0 s, aplay's exec at 121.1 s, its first frame at 122.0 s.
        self.assertIn("    cycle 1  player      700        0        -        -      800\n", printed)
        self.assertIn("             floor       500      100        -        -      900\n", printed)
        self.assertIn("ours: RouteChanged -> first frame 800 ms for the player against 900 ms from aplay's start on BlueALSA: "
                      "-100 ms (medians)\n", printed)

    def test_a_cycle_without_connected_fails(self):
        # Both Connected signals gone (the floor's would count: it comes after bt-ready 1 too).
        lines = [line for line in self.lines if not line.startswith("log btsignals ")]
        with self.assertRaisesRegex(Failure, "cycle 1: no Device1.Connected=true from BlueZ after bt-ready"):
            quietly(print_timing, lines, HEADSET, 1)


class Ear(unittest.TestCase):
    lines = recorded("bluetooth-run.console")

    def test_loud_frames_between_two_reports(self):
        # The ear's last reports before bt-ready 2 and before bt-disconnect 2:
        # "ear /run/ear-48000-2.raw 60517461000 272384 261873", "... 82060942500 543424 522452".
        self.assertAlmostEqual(loud_between(self.lines, "bt-ready 2", "bt-disconnect 2"), (522452 - 261873) / 48000)

    def test_every_file_counts_and_only_the_first_loud_report_after_a_moment(self):
        lines = ["ear /run/ear-48000-2.raw 1000000000 100 10", "ear /run/ear-16000-1.raw 1100000000 50 5",
                 "ear /run/ear-48000-2.raw 2000000000 200 10", "ear /run/ear-48000-2.raw 3000000000 300 90", "end"]
        self.assertEqual(ear_at(lines, 4), (350, 95))
        self.assertEqual(ear_at(lines, 2), (150, 15))
        self.assertEqual(first_ear_after(lines, 1.5), 3.0)
        self.assertIsNone(first_ear_after(lines, 3.0))


class Logs(unittest.TestCase):
    lines = recorded("bluetooth-run.console")

    def test_the_recorded_run_passes(self):
        problems, printed = quietly(check_logs, self.lines, 5, HEADSET)
        self.assertEqual(problems, [])
        # The monitor's routeChange lines: 14 newDeviceAvailable to the headset's A2DP port.
        self.assertIn(f"newDeviceAvailable to {A2DP}: 14;", printed)
        self.assertIn("cycle 2: 5.43 s of the tone reached the headset", printed)
        # The plugin's traces, from the logs aplay-system and aplay-call.
        self.assertIn("    aplay -D audioroute with the system instance, its trace (AUDIOROUTE_DEBUG):\n      audioroute 244.188672: "
                      "open on dmix:CARD=Intel,DEV=0, category playback; a session in the tower\n", printed)
        self.assertIn("    the plugin's call, its trace (AUDIOROUTE_DEBUG):\n      audioroute 203.491541: open on "
                      f"bluealsa:DEV={HEADSET},PROFILE=a2dp, category playAndRecord; a session in the tower\n", printed)

    def test_a_missing_arrival_is_a_problem(self):
        arrivals = [i for i, line in enumerate(self.lines)
                    if line.startswith("log monitor ") and '"reason": "newDeviceAvailable"' in line and f'"outputs": ["{A2DP}"]}}' in line]
        self.assertEqual(len(arrivals), 14)
        # Five cycles need their five arrivals and the two calls' returns to A2DP: seven at least.
        dropped = set(arrivals[7:])
        problems, _ = quietly(check_logs, [line for i, line in enumerate(self.lines) if i not in dropped], 5, HEADSET)
        self.assertEqual(problems, [])
        dropped = set(arrivals[6:])
        problems, _ = quietly(check_logs, [line for i, line in enumerate(self.lines) if i not in dropped], 5, HEADSET)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("route changes: 6 arrivals (expected 7)"), problems)

    def test_a_cycle_the_headset_did_not_hear_is_a_problem(self):
        start, end = self.lines.index(next(l for l in self.lines if l.startswith("bt-ready 2 "))), \
            self.lines.index(next(l for l in self.lines if l.startswith("bt-disconnect 2 ")))
        # The ear's loud count frozen during cycle 2 (and the counts after it lowered to match).
        frozen = [re.sub(r"^(ear \S+ \d+ \d+) (\d+)$", lambda m: f"{m.group(1)} {int(m.group(2)) - (522452 - 261873)}", line)
                  if i > start and line.startswith("ear /run/ear-48000-2.raw ") else line for i, line in enumerate(self.lines)]
        problems, _ = quietly(check_logs, frozen, 5, HEADSET)
        self.assertEqual(problems, ["cycle 2: only 0.00 s of the tone reached the headset (expected 2 s and more)"])
        self.assertLess(start, end)

    def test_music_the_headset_did_not_hear_is_a_problem(self):
        for start, end, problem in (
                ("plugin-start", "plugin-playing", "aplay -D audioroute: only 0.00 s reached the headset"),
                ("call-ended", "call-after", "after the call the music (audioroute play) did not come back to the headset (0.00 s)"),
                ("plugin-call-ended", "plugin-call-after", "after the call the music (aplay) did not come back to the headset (0.00 s)"),
                ("sys-play-moved", "sys-play-heard",
                 "audioroute play --system: only 0.00 s of 3 s reached the headset while the route was the headset"),
                ("sys-aplay-moved", "sys-aplay-heard",
                 "aplay -D audioroute, the system instance: only 0.00 s of 3 s reached the headset while the route was the headset")):
            with self.subTest(start):
                problems, printed = quietly(check_logs, silenced(self.lines, start, end), 5, HEADSET)
                self.assertEqual(problems, [problem])
        # The plugin's music that did not come back: its trace is printed.
        _, printed = quietly(check_logs, silenced(self.lines, "plugin-call-ended", "plugin-call-after"), 5, HEADSET)
        self.assertIn("    the music's trace (AUDIOROUTE_DEBUG), its last lines:\n      audioroute ", printed)

    def test_the_system_instances_plugin_without_a_session_is_a_problem(self):
        index = at(self.lines, "log aplay-system audioroute")
        self.assertIn("; a session in the tower", self.lines[index])
        lines = self.lines[:index] + [self.lines[index].replace("; a session in the tower", "")] + self.lines[index + 1:]
        problems, _ = quietly(check_logs, lines, 5, HEADSET)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("aplay -D audioroute with the system instance: its open did not get a session"), problems)

    def test_a_call_failing_without_btvirts_sco_refusal_is_a_problem(self):
        lines = [line for line in self.lines if not (line.startswith("log bluealsa-src ") and "SCO link" in line)]
        problems, _ = quietly(check_logs, lines, 5, HEADSET)
        self.assertEqual(problems, ["the call (audioroute play) ended 1, and BlueALSA did not refuse the SCO link: the failure is not btvirt's",
                                    "the call (aplay -D audioroute) ended 1, and BlueALSA did not refuse the SCO link: the failure is not btvirt's"])

    def test_the_headset_left_in_hfp_is_a_problem(self):
        last = ('log monitor {"monotonicNs": 999000000000, "event": "routeChange", "reason": "categoryChange", '
                f'"previous": {{"inputs": [], "outputs": ["{A2DP}"]}}, "current": {{"inputs": [], "outputs": ["bt:{HEADSET}:hfp"]}}}}')
        problems, _ = quietly(check_logs, self.lines + [last], 5, HEADSET)
        self.assertEqual(problems, ["the headset was left in HFP at the end"])


if __name__ == "__main__":
    unittest.main()
