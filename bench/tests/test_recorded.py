"""The phases' checks on recorded guest consoles (fixtures/quick-run.console, fixtures/surround-capture.console;
fixtures/README.md):
what they read from the guest's reports, and what they make of a report changed to a fault. The
expected values are read off the recorded lines (the kernel's tools, udev's and the monitor's
stamps), quoted beside each."""
import json
import unittest

from fake_guest import FakeGuest, quietly, recorded
from realkernel import capture, cycles, surround
from realkernel.boot import check_boot
from realkernel.common import Failure
from realkernel.reports import aplay_session, port_uids
from realkernel.routes import check_route_changes
from realkernel.timing import cycle_timings
from realkernel.ucm import report_stock_ucm

SPEAKER = "pci-0000:00:04.0/speaker"
USB = "usb-QEMU_QEMU_USB_Audio_1-0000:00:05.0-1-00/output"


def replaced(lines, old, new):
    """The lines with the first that starts with `old` rewritten to start with `new`."""
    index = next(i for i, line in enumerate(lines) if line.startswith(old))
    return lines[:index] + [new + lines[index][len(old):]] + lines[index + 1:]


class Boot(unittest.TestCase):
    lines = recorded("quick-run.console")

    def test_the_card_as_the_kernels_tools_print_it(self):
        mic, printed = quietly(check_boot, self.lines)
        # arecord -l: "card 0: Intel [HDA Intel], device 0: Generic Analog", the first capture PCM.
        self.assertEqual(mic["alsa"], "dsnoop:CARD=Intel,DEV=0")
        # /proc/asound/cards "0 [Intel ]: HDA-Intel - HDA Intel"; amixer "Mixer name: 'QEMU Generic'";
        # the codec files' four Pin Complex nodes (0x03 and 0x05 on codecs 0 and 1).
        self.assertIn("card0 Intel [HDA Intel] driver HDA-Intel, mixer 'QEMU Generic'", printed)
        self.assertIn("4 HDA pins: as the kernel's tools say", printed)
        self.assertIn("the speaker's: dmix:CARD=Intel,DEV=2", printed)

    def test_a_mixer_name_the_watcher_did_not_read_fails(self):
        lines = replaced(self.lines, "amixer Mixer name\t: 'QEMU Generic'", "amixer Mixer name\t: 'Realtek ALC269VB'")
        with self.assertRaisesRegex(Failure, "mixerName: 'QEMU Generic' read, 'Realtek ALC269VB' in the kernel's"):
            quietly(check_boot, lines)

    def test_a_pin_the_watcher_did_not_read_fails(self):
        lines = replaced(self.lines, "codec 1 Pin Default 0x00a05020", "codec 1 Pin Default 0x00a05030")
        with self.assertRaisesRegex(Failure, "the HDA pins the watcher read"):
            quietly(check_boot, lines)

    def test_a_speaker_on_another_pcm_fails(self):
        lines = replaced(self.lines, "aplay card 0: Intel [HDA Intel], device 2:", "aplay card 0: Intel [HDA Intel], device 3:")
        with self.assertRaisesRegex(Failure, "PCM names the watcher read"):
            quietly(check_boot, lines)

    def test_a_mic_port_on_another_pcm_than_arecords_first_fails(self):
        lines = [line.replace("dsnoop:CARD=Intel,DEV=0", "dsnoop:CARD=Intel,DEV=2") if line.startswith("ports ") else line
                 for line in self.lines]
        with self.assertRaisesRegex(Failure, "the mic port opens dsnoop:CARD=Intel,DEV=2"):
            quietly(check_boot, lines)

    def test_a_channel_map_with_channels_played_nowhere_unsaid_fails(self):
        lines = replaced(self.lines, "chmaps ", "chmaps query FIXED FL FR|get FL FR| query FIXED FL FR|get FL FR FC LFE RL RR|")
        with self.assertRaisesRegex(Failure, "channel maps on the HDA card"):
            quietly(check_boot, lines)


class Reports(unittest.TestCase):
    lines = recorded("quick-run.console")

    def test_the_outputs_and_aplays_session(self):
        added = next(line for line in self.lines if line.startswith("added 1 "))
        self.assertEqual(port_uids(added, "added 1"), [SPEAKER, USB])
        ready = next(line for line in self.lines if line.startswith("plugin-sessions-ready 1 "))
        session = aplay_session(ready, "plugin-sessions-ready 1")
        self.assertEqual((session["category"], session["active"]), ("playback", True))

    def test_a_report_without_json_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'added 1': `audioroute ports --json` printed no JSON"):
            port_uids("added 1 Error: the daemon is not running", "added 1")


class Cycles(unittest.TestCase):
    """The player's and the plugin's cycle 1: their reports as events, and the checks of them."""
    lines = recorded("quick-run.console")

    def reports(self, lines=None):
        lines = self.lines if lines is None else lines
        return [event.find(lines, 1) for event in (cycles.Added, cycles.Removed, cycles.Player)]

    def test_every_report_of_cycle_1_reads_into_its_event(self):
        # Each of the cycles' reports but `stuck` (nothing outlived its SIGTERM) is there for cycle 1.
        for event in cycles.EVENTS:
            with self.subTest(event.__name__):
                report = event.find(self.lines, *(() if event is cycles.Stuck else (1,)))
                self.assertEqual(report is None, event is cycles.Stuck)
        # "plugin-removed 1 alive"; "player 1 running 0:05/0:40 Speaker paused".
        self.assertEqual(cycles.PluginRemoved.find(self.lines, 1).state, "alive")
        self.assertEqual(cycles.Player.find(self.lines, 1).text, "running 0:05/0:40 Speaker paused")

    def test_one_usb_port_while_plugged_and_the_player_paused_after(self):
        # added 1: the speaker, the mic (an input) and the USB card's output; removed 1: the speaker and the mic.
        (speaker, usb), printed = quietly(cycles.check_cycle_reports, *self.reports(), None, None)
        self.assertEqual((speaker, usb), ([SPEAKER], USB))
        self.assertIn(f"ports with the USB card: {[SPEAKER, USB]}", printed)
        self.assertEqual(quietly(cycles.check_cycle_reports, *self.reports(), [SPEAKER], USB)[0], ([SPEAKER], USB))

    def test_a_player_that_exited_or_plays_on_fails(self):
        for player in ("player 1 exited 1 Error: no route|", "player 1 running 0:05/0:40 Speaker playing"):
            with self.subTest(player):
                added, removed, _ = self.reports()
                with self.assertRaisesRegex(Failure, "cycle 1: after the removal the player should be there and paused"):
                    quietly(cycles.check_cycle_reports, added, removed, cycles.Player.parse(player), None, None)

    def test_the_usb_port_left_after_the_removal_fails(self):
        added, _, player = self.reports()
        removed = cycles.Removed.parse(added.report.replace("added 1", "removed 1", 1))
        with self.assertRaisesRegex(Failure, r"cycle 1: after the removal the outputs are .*, expected exactly \['pci"):
            quietly(cycles.check_cycle_reports, added, removed, player, [SPEAKER], None)

    def test_no_usb_port_or_another_one_than_before_fails(self):
        added, removed, player = self.reports()
        with self.assertRaisesRegex(Failure, "cycle 1: with the USB card the outputs are .*, expected .* and one USB port"):
            quietly(cycles.check_cycle_reports, cycles.Added.parse(removed.report.replace("removed 1", "added 1", 1)), removed,
                    player, None, None)
        with self.assertRaisesRegex(Failure, f"cycle 1: the re-added USB card's port is {USB}, not usb-other/output as before"):
            quietly(cycles.check_cycle_reports, added, removed, player, [SPEAKER], "usb-other/output")

    def test_the_plugins_session_moved_with_the_stream(self):
        # plugin-sessions-ready 1 and -added 1: aplay's session /org/audioroute/AudioRoute1/session/4, active both times.
        ready, added = (event.find(self.lines, 1).session for event in (cycles.PluginSessionsReady, cycles.PluginSessionsAdded))
        cycles.check_plugin_sessions(1, ready, added)
        for changed in ({**added, "path": "/org/audioroute/AudioRoute1/session/5"}, {**added, "active": False}):
            with self.subTest(changed), self.assertRaisesRegex(Failure, "plugin cycle 1: aplay's session should be the same one"):
                cycles.check_plugin_sessions(1, ready, changed)

    def test_the_traces(self):
        # Six `player-trace 1` lines, 18 `plugin-trace 1` lines, the first as quoted; not another cycle's.
        guest = FakeGuest([(b"", line) for line in self.lines + ["player-trace 2 audioroute 40.0: the route names hw:9"]])
        player = cycles.trace(guest, cycles.PlayerTrace, cycles.PlayerTraceEnd, 1)
        self.assertEqual(len(player), 6)
        self.assertEqual(player[0], "audioroute 18.018552: open on dmix:CARD=Intel,DEV=2, category playback; following its client's session")
        self.assertEqual(len(quietly(cycles.plugin_trace, guest, 1)[0]), 18)

    def test_an_aplay_that_outlived_its_sigterm_fails(self):
        lines = self.lines + ["stuck plugin-cycle-1 do_wait 61 0x0 SigBlk: 0000000000000000"]
        with self.assertRaisesRegex(Failure, r"plugin cycle 1: aplay outlived its SIGTERM by 5 s \(plugin-cycle-1 do_wait"):
            quietly(cycles.plugin_trace, FakeGuest([(b"", line) for line in lines]), 1)


class SurroundReports(unittest.TestCase):
    """The surround phase's reports, recorded: the multichannel card's port and the plugin's channel maps."""
    lines = recorded("surround-capture.console")

    def test_every_report_reads_into_its_event(self):
        for event in surround.EVENTS:
            with self.subTest(event.__name__):
                self.assertIsNotNone(event.find(self.lines))

    def test_dmix_at_the_widest_altsets_channels(self):
        # surround-added: stream0's playback altsets have 2, 6 and 8 channels (QEMU's usb-audio with
        # multi=on), the 8's map FL FR FC LFE RL RR SL SR; surround-ports: the card's one output
        # usb-..05.0-2-00/output on dmix:CARD=Audio,DEV=0,CHANNELS=8.
        added, ports = surround.SurroundAdded.find(self.lines), surround.SurroundPorts.find(self.lines)
        self.assertEqual(added.playback(), ([2, 6, 8], ["FL FR", "FL FR FC LFE RL RR", "FL FR FC LFE RL RR SL SR"]))
        (widest, port), printed = quietly(surround.check_surround_port, added, ports)
        self.assertEqual((widest, port["uid"], port["alsa"]),
                         (8, "usb-QEMU_QEMU_USB_Audio_1-0000:00:05.0-2-00/output", "dmix:CARD=Audio,DEV=0,CHANNELS=8"))
        self.assertIn("its output port: dmix:CARD=Audio,DEV=0,CHANNELS=8", printed)
        quietly(surround.check_surround_chmaps, added, surround.SurroundChmaps.find(self.lines))

    def test_a_port_not_at_the_cards_channels_fails(self):
        added, ports = surround.SurroundAdded.find(self.lines), surround.SurroundPorts.find(self.lines)
        six = surround.SurroundPorts.parse(ports.report.replace("CHANNELS=8", "CHANNELS=6"))
        with self.assertRaisesRegex(Failure, "expected one whose ALSA name ends with ,CHANNELS=8"):
            quietly(surround.check_surround_port, added, six)
        none = surround.SurroundAdded.parse(added.report.replace("Channels: ", "Voices: "))
        with self.assertRaisesRegex(Failure, "the card's stream file lists no playback channels"):
            quietly(surround.check_surround_port, none, ports)

    def test_channel_maps_without_the_cards_fail(self):
        added, chmaps = surround.SurroundAdded.find(self.lines), surround.SurroundChmaps.find(self.lines)
        stereo = surround.SurroundChmaps.parse(chmaps.report.replace("FIXED FL FR FC LFE RL RR SL SR", "FIXED FL FR"))
        with self.assertRaisesRegex(Failure, r"the plugin does not offer the card's 8-channel map \(FL FR FC LFE RL RR SL SR\)"):
            quietly(surround.check_surround_chmaps, added, stereo)


class CaptureReports(unittest.TestCase):
    """The capture phase's reports, recorded: two readers of the mic while the USB card comes and goes."""
    lines = recorded("surround-capture.console")
    # The boot's ports: the mic, pci-0000:00:04.0/mic on dsnoop:CARD=Intel,DEV=0.
    mic = next(p for p in json.loads(lines[0][len("ports "):]) if p["direction"] == "input")

    def reports(self):
        return [event.find(self.lines) for event in (capture.CaptureReady, capture.CaptureRoute, capture.CaptureHw)]

    def test_every_report_reads_into_its_event(self):
        for event in capture.EVENTS:
            with self.subTest(event.__name__):
                self.assertIsNotNone(event.find(self.lines))
        # capture-ready 114.69 ...; capture-removed 120.08 ...; capture-done 1 1 1920000 1920000 (10 s each).
        self.assertEqual(capture.CaptureReady.find(self.lines).at, 114.69)
        self.assertEqual(capture.CaptureRemoved.find(self.lines).at, 120.08)
        self.assertEqual(capture.CaptureDone.find(self.lines).sizes, [1920000, 1920000])

    def test_the_readers_on_the_mics_dsnoop_through_the_usb_cards_visit(self):
        self.assertEqual((self.mic["uid"], self.mic["alsa"]), ("pci-0000:00:04.0/mic", "dsnoop:CARD=Intel,DEV=0"))
        _, printed = quietly(capture.check_capture_ready, *self.reports(), self.mic)
        self.assertIn("sessions: [('aplay', 'playAndRecord', [], True), ('aplay', 'playAndRecord', ['mixWithOthers'], True)]", printed)
        _, printed = quietly(capture.check_capture_added, capture.CaptureAdded.find(self.lines), self.mic["uid"], [SPEAKER])
        self.assertIn(f"with the USB card: outputs ['{USB}'], inputs ['pci-0000:00:04.0/mic']", printed)
        capture.check_capture_removed(capture.CaptureRemoved.find(self.lines), self.mic["uid"], [SPEAKER])

    def test_a_reader_that_stopped_two_hardware_streams_or_another_pcm_fail(self):
        ready, route, hw = self.reports()
        cases = [(capture.CaptureReady.parse(ready.report.replace("alive alive", "alive exited")), route, hw, "the readers did not run"),
                 (ready, route, capture.CaptureHw.parse(hw.report.replace("closed", "state: RUNNING")), "found \\[\\('0', '0'\\), \\('2', '0'\\)\\]"),
                 (ready, capture.CaptureRoute.parse(route.report.replace("DEV=0", "DEV=2")), hw, "not the mic port's dsnoop PCM"),
                 (capture.CaptureReady.parse(ready.report.replace('"active": true', '"active": false', 1)), route, hw,
                  "with the readers started, the sessions are")]
        for ready_, route_, hw_, message in cases:
            with self.subTest(message), self.assertRaisesRegex(Failure, message):
                quietly(capture.check_capture_ready, ready_, route_, hw_, self.mic)

    def test_the_route_not_moved_or_the_mic_lost_fails(self):
        added, removed = capture.CaptureAdded.find(self.lines), capture.CaptureRemoved.find(self.lines)
        with self.assertRaisesRegex(Failure, "expected the USB output and the HDA mic"):
            quietly(capture.check_capture_added, added, self.mic["uid"], [SPEAKER, USB])
        lost = capture.CaptureRemoved.parse(removed.report.replace('"uid": "pci-0000:00:04.0/mic"', '"uid": "pci-0000:00:04.0/other"', 1))
        with self.assertRaisesRegex(Failure, "after the removal the route is"):
            capture.check_capture_removed(lost, self.mic["uid"], [SPEAKER])
        with self.assertRaisesRegex(Failure, "after the USB card left the readers are \\['exited', 'alive'\\]"):
            capture.check_capture_removed(capture.CaptureRemoved.parse(removed.report.replace("alive alive", "exited alive")),
                                          self.mic["uid"], [SPEAKER])


class RouteChanges(unittest.TestCase):
    lines = recorded("quick-run.console")

    def test_to_the_usb_card_and_back_three_times(self):
        # One player cycle, one plugin cycle and its re-plug: the monitor's six routeChange lines.
        _, printed = quietly(check_route_changes, self.lines, 3, [SPEAKER], USB, None)
        self.assertIn("6 route changes, as expected", printed)

    def test_a_missing_or_extra_change_fails(self):
        with self.assertRaisesRegex(Failure, "the client's route changes were"):
            quietly(check_route_changes, self.lines, 2, [SPEAKER], USB, None)
        with self.assertRaisesRegex(Failure, "the client's route changes were"):
            quietly(check_route_changes, self.lines, 3, [SPEAKER], USB, "pci-0000:00:04.0/headphones")


class Timing(unittest.TestCase):
    lines = recorded("quick-run.console")

    def test_the_moments_from_the_kernels_add(self):
        # KERNEL[20.050741] add .../sound/card1; UDEV [20.718808] change .../sound/card1, then
        # SOUND_INITIALIZED=1; the monitor's newDeviceAvailable at monotonicNs 21241223185.
        # The second add: KERNEL[29.086819], UDEV [29.480453], newDeviceAvailable 29474638495.
        rows = cycle_timings(self.lines, [(0.0, 21.4), (0.0, 29.6)])
        expected = [(20.718808 - 20.050741, 21.241223185 - 20.050741, 21.4 - 20.050741, 20.050741),
                    (29.480453 - 29.086819, 29.474638495 - 29.086819, 29.6 - 29.086819, 29.086819)]
        for row, want in zip(rows, expected):
            for value, wanted in zip(row, want):
                self.assertAlmostEqual(value, wanted, places=6)

    def test_only_newDeviceAvailable_is_the_route_change_of_an_add(self):
        # A route change for another reason between the add and newDeviceAvailable is not (ii).
        other = ('log monitor {"monotonicNs": 21000000000, "event": "routeChange", "reason": "categoryChange", '
                 '"previous": {"inputs": [], "outputs": ["%s"]}, "current": {"inputs": [], "outputs": ["%s"]}}' % (SPEAKER, SPEAKER))
        lines = list(self.lines)
        lines.insert(lines.index(next(l for l in lines if "newDeviceAvailable" in l)), other)
        (row,) = cycle_timings(lines, [(0.0, 21.4)])
        self.assertAlmostEqual(row[1], 21.241223185 - 20.050741, places=6)

    def test_a_cycle_without_its_first_frame_or_its_add_fails(self):
        with self.assertRaisesRegex(Failure, "cycle 1: missing a moment"):
            cycle_timings(self.lines, [(0.0, None)])
        # Three adds of card1 in the log (the player's, the plugin's, the re-plug): no fourth.
        with self.assertRaisesRegex(Failure, "cycle 4: no kernel add uevent"):
            cycle_timings(self.lines, [(0.0, 40.0)], first=3)


class StockUCM(unittest.TestCase):
    lines = recorded("quick-run.console")

    def test_what_the_helper_answered(self):
        # The daemon's log: "UCM helper started" twice; "no UCM profile" for card=hw:0, then hw:1;
        # "termination=exited(0)" both times.
        _, printed = quietly(report_stock_ucm, self.lines)
        self.assertIn("the helper started 2 times; answers without a profile {'hw:0': 1, 'hw:1': 1}; ended by a signal 0 times",
                      printed)

    def test_a_guest_without_alsa_ucm_conf_fails(self):
        lines = replaced(self.lines, "stock-ucm ", "stock-ucm ls: /usr/share/alsa/ucm2/ucm.conf: No such file or directory ")
        with self.assertRaisesRegex(Failure, "the guest lacks alsa-ucm-conf's tree"):
            quietly(report_stock_ucm, lines)


if __name__ == "__main__":
    unittest.main()
