"""The UCM phase's checks: a step's controls and levels against the bench's UCM configuration
(Tests/Fixtures/ucm2-bench: HiFi sets the Master amp to 74 of 74 steps, Voice Call to 37, which
QEMU applies linearly; the Speaker is the amp's left channel, the Earpiece its right), and the
controls' states and the memory reports in a recorded UCM phase (fixtures/ucm-phase.console)."""
import unittest

from fake_guest import quietly, recorded
from realkernel.common import Failure
from realkernel.reports import memory_report
from realkernel import ucm
from realkernel.ucm import STEP_EVENTS, check_ucm_controls, print_memory, ucm_check_step

REFERENCE = 10000  # the music's level on the Speaker with HiFi
# ucm-ports: the HDA card's profile's outputs (its Speaker and Earpiece).
HDA_OUTPUTS = ["pci-0000:00:04.0/receiver", "pci-0000:00:04.0/speaker"]
USB_HEADPHONES = "usb-QEMU_QEMU_USB_Audio_1-0000:00:05.0-1-00/headphones"
CALL = STEP_EVENTS["call"][0].parse("ucm-call switch=off,on volume=37,37 capture=on,on {}")


class Step(unittest.TestCase):
    def test_voice_call_on_the_earpiece_at_half_volume(self):
        self.assertEqual((CALL.switch, CALL.volume, CALL.capture, CALL.status), ("off,on", "37,37", "on,on", {}))
        _, printed = quietly(ucm_check_step, "call", CALL, (0, 5000), REFERENCE, "Voice Call", "builtInReceiver", True)
        self.assertIn("(0.50x on the right (Earpiece))", printed)

    def test_the_tone_on_both_channels_fails(self):
        with self.assertRaisesRegex(Failure, "both outputs sound"):
            quietly(ucm_check_step, "call", CALL, (400, 5000), REFERENCE, "Voice Call", "builtInReceiver", True)

    def test_the_earpiece_at_hifis_volume_fails(self):
        with self.assertRaisesRegex(Failure, r"at 1.00x on the expected channel, expected 0.5 \(Voice Call\)"):
            quietly(ucm_check_step, "call", CALL, (0, 10000), REFERENCE, "Voice Call", "builtInReceiver", True)

    def test_controls_not_the_verbs_fail(self):
        line = STEP_EVENTS["call"][0].parse("ucm-call switch=on,on volume=37,37 capture=on,on {}")
        with self.assertRaisesRegex(Failure, "expected Voice Call with Earpiece and Mic: switch off,on, volume 37,37, capture on,on"):
            quietly(ucm_check_step, "call", line, (0, 5000), REFERENCE, "Voice Call", "builtInReceiver", True)
        line = STEP_EVENTS["music"][0].parse("ucm-music switch=on,off volume=74,74 capture=on,on {}")
        with self.assertRaisesRegex(Failure, "capture on,on"):
            quietly(ucm_check_step, "music", line, (10000, 0), REFERENCE, "HiFi", "builtInSpeaker", False)


class MicMute(unittest.TestCase):
    """The Mic device's CaptureSwitch turned off and on during the call, and what the recorder beside it heard."""
    MUTED = ucm.UcmMicMuted.parse("ucm-mic-muted capture=off,off began=builtInMicMuted")
    UNMUTED = ucm.UcmMicUnmuted.parse("ucm-mic-unmuted capture=on,on ended=shouldResume")

    def test_muted_then_resumed(self):
        self.assertEqual((self.MUTED.capture, self.MUTED.heard, self.UNMUTED.capture, self.UNMUTED.heard),
                         ("off,off", "builtInMicMuted", "on,on", "shouldResume"))
        _, printed = quietly(ucm.check_ucm_mic_mute, self.MUTED, self.UNMUTED)
        self.assertIn("the recorder heard builtInMicMuted", printed)

    def test_another_reason_or_none_fails(self):
        for line in ("ucm-mic-muted capture=off,off began=default", "ucm-mic-muted capture=off,off began=",
                     "ucm-mic-muted capture=on,on began=builtInMicMuted"):
            with self.subTest(line), self.assertRaisesRegex(Failure, "expected builtInMicMuted"):
                quietly(ucm.check_ucm_mic_mute, ucm.UcmMicMuted.parse(line), self.UNMUTED)

    def test_an_end_without_should_resume_fails(self):
        for line, said in (("ucm-mic-unmuted capture=on,on ended=none", "ended with none"), ("ucm-mic-unmuted capture=on,on ended=", "ended never")):
            with self.subTest(line), self.assertRaisesRegex(Failure, said):
                quietly(ucm.check_ucm_mic_mute, self.MUTED, ucm.UcmMicUnmuted.parse(line))


def data_source_line(words, cvol, selected, sources=("Mic", "Mic2"), input_type="builtInMic"):
    """A data-source report as ucm.sh says it: the mic's uid, the ADC volume and a status."""
    mic = "pci-0000:00:04.0/mic"
    source_list = ", ".join(f'{{"id": "{s}", "name": "{s}", "alsa": "dsnoop:CARD=Intel,DEV=0"}}' for s in sources)
    status = (f'{{"route": {{"inputs": [{{"uid": "{mic}", "type": "{input_type}", "dataSources": [{source_list}], '
              f'"selectedDataSource": "{selected}"}}], "outputs": []}}}}')
    return f"{words} mic={mic} cvol={cvol} {status}"


class DataSource(unittest.TestCase):
    def test_mic2_preferred_then_mic_back(self):
        _, printed = quietly(ucm.check_ucm_data_source, ucm.UcmDataSource.parse(data_source_line("ucm-datasource", "10,10", "Mic2")), "Mic2")
        self.assertIn("data sources ['Mic', 'Mic2'], selected Mic2; the ADC volume 10,10", printed)
        quietly(ucm.check_ucm_data_source, ucm.UcmDataSourceBack.parse(data_source_line("ucm-datasource-back", "50,50", "Mic")), "Mic")

    def test_the_other_mics_volume_fails(self):
        report = ucm.UcmDataSource.parse(data_source_line("ucm-datasource", "50,50", "Mic2"))
        with self.assertRaisesRegex(Failure, "the ADC volume is 50,50, expected 10,10: the helper did not enable Mic2"):
            quietly(ucm.check_ucm_data_source, report, "Mic2")

    def test_the_status_selecting_another_fails(self):
        report = ucm.UcmDataSource.parse(data_source_line("ucm-datasource", "10,10", "Mic"))
        with self.assertRaisesRegex(Failure, "the status says Mic is in use, expected Mic2"):
            quietly(ucm.check_ucm_data_source, report, "Mic2")

    def test_missing_data_sources_or_another_input_fail(self):
        report = ucm.UcmDataSource.parse(data_source_line("ucm-datasource", "10,10", "Mic2", sources=("Mic2", "Mic")))
        with self.assertRaisesRegex(Failure, "data sources are \\['Mic2', 'Mic'\\]"):
            quietly(ucm.check_ucm_data_source, report, "Mic2")
        report = ucm.UcmDataSource.parse(data_source_line("ucm-datasource", "10,10", "Mic2", input_type="headsetMic"))
        with self.assertRaisesRegex(Failure, "expected the built-in mic"):
            quietly(ucm.check_ucm_data_source, report, "Mic2")


class RecordedPhase(unittest.TestCase):
    lines = recorded("ucm-phase.console")

    def test_never_both_outputs_on(self):
        # guest-controls' 26 lines: the switch goes on,off -> off,off -> off,on and back, never on,on.
        _, printed = quietly(check_ucm_controls, self.lines)
        self.assertIn("26 states of the controls, read at each control event", printed)

    def test_a_state_with_both_on_fails(self):
        index = next(i for i, line in enumerate(self.lines) if line.startswith("log controls-ucm controls "))
        lines = self.lines[:index + 1] + ["log controls-ucm controls 171997036600 switch=on,on volume=74 capture=off,off"] + self.lines[index + 1:]
        with self.assertRaisesRegex(Failure, r"both on \(1 of 27 states\)"):
            quietly(check_ucm_controls, lines)

    def test_no_state_fails(self):
        with self.assertRaisesRegex(Failure, "recorded no state"):
            quietly(check_ucm_controls, [line for line in self.lines if not line.startswith("log controls-ucm ")])

    def test_the_memory_reports(self):
        # "ucm-usb-memory 1 audiorouted[1151],VmHWM=9576,VmRSS=9576,RssAnon=1236 audioroute-ucm[1164],VmHWM=5892,..."
        line = next(line for line in self.lines if line.startswith("ucm-usb-memory 1 "))
        self.assertEqual(memory_report(line), [("audiorouted", {"VmHWM": 9576, "VmRSS": 9576, "RssAnon": 1236}),
                                               ("audioroute-ucm", {"VmHWM": 5892, "VmRSS": 5892, "RssAnon": 788})])
        memory = [memory_report(line) for line in self.lines if line.startswith("ucm-usb-memory")]
        _, printed = quietly(print_memory, memory, self.lines)
        # daemon-memory-start: VmRSS=9916 kB, RssAnon=1240, VmHWM=11348: 9.68 (1.21, 11.08) MiB; the
        # first daemon ran no helper.
        self.assertRegex(printed, r"first daemon, udev's ports, at start +9\.68 \(1\.21, 11\.08\) +-\n")
        # ucm-usb-memory 1: the daemon's 9576 kB and the helper's VmRSS=5892, RssAnon=788.
        self.assertRegex(printed, r"UCM cards, cycle 1, the USB card up +9\.35 \(1\.21, 9\.35\) +5\.75 \(0\.77, 5\.75\)\n")


class RecordedDataSource(unittest.TestCase):
    """The data-source step's two reports, recorded (fixtures/ucm-phase.console, README): amixer's
    Capture Volume (10,10 with Mic2's sequence, 50,50 with Mic's) and the status the CLI printed."""
    lines = recorded("ucm-phase.console")

    def test_mic2_while_preferred_then_mic(self):
        chosen, back = ucm.UcmDataSource.find(self.lines), ucm.UcmDataSourceBack.find(self.lines)
        self.assertEqual((chosen.cvol, back.cvol), ("10,10", "50,50"))
        _, printed = quietly(ucm.check_ucm_data_source, chosen, "Mic2")
        self.assertIn("data sources ['Mic', 'Mic2'], selected Mic2; the ADC volume 10,10", printed)
        quietly(ucm.check_ucm_data_source, back, "Mic")

    def test_each_report_against_the_other_mic_fails(self):
        with self.assertRaisesRegex(Failure, "the status says Mic2 is in use, expected Mic"):
            quietly(ucm.check_ucm_data_source, ucm.UcmDataSource.find(self.lines), "Mic")
        with self.assertRaisesRegex(Failure, "the status says Mic is in use, expected Mic2"):
            quietly(ucm.check_ucm_data_source, ucm.UcmDataSourceBack.find(self.lines), "Mic2")


class RecordedUsbCycle(unittest.TestCase):
    """The UCM phase's USB cycle 1, recorded (fixtures/ucm-phase.console): its reports' checks."""
    lines = recorded("ucm-phase.console")

    def reports(self, lines=None):
        lines = self.lines if lines is None else lines
        return [event.find(lines, 1) for event in (ucm.UcmUsbAdded, ucm.UcmUsbRemoved, ucm.UcmUsbMemory)]

    def test_every_report_of_the_phase_reads_into_its_event(self):
        # The phase's reports, cycle 1 for the numbered ones; stock-ucm is not in this recording.
        for event in ucm.EVENTS:
            with self.subTest(event.__name__):
                key = (1,) if event in (ucm.UcmUsbReady, ucm.UcmUsbAdded, ucm.UcmUsbRemoved, ucm.UcmUsbMemory) else ()
                self.assertEqual(event.find(self.lines, *key) is None, event is ucm.StockUcm)
        # "ucm-usb-added 1 usb-switch=on usb-volume=128,128 switch=off,off {...}"; "ucm-usb-removed 1 switch=on,off [...]".
        added, removed, _ = self.reports()
        self.assertEqual(ucm.usb_controls(added), ("on", "128,128", "off,off"))
        self.assertEqual(removed.controls, {"switch": "on,off"})

    def test_the_profiles_headphones_routed_and_the_speaker_back_after(self):
        # ucm-usb-added 1: the speaker, the receiver and the USB card's headphones on dmix:CARD=Audio,DEV=0,
        # the route on the headphones; one audioroute-ucm in ucm-usb-memory 1.
        added, removed, memory = self.reports()
        uid, printed = quietly(ucm.check_ucm_usb_port, added, HDA_OUTPUTS, None)
        self.assertEqual(uid, USB_HEADPHONES)
        self.assertIn(f"the route ['{USB_HEADPHONES}']", printed)
        self.assertEqual(quietly(ucm.check_ucm_usb_port, added, HDA_OUTPUTS, USB_HEADPHONES)[0], USB_HEADPHONES)
        ucm.check_ucm_usb_after(added, removed, memory.processes, HDA_OUTPUTS)

    def test_a_usb_port_not_the_profiles_headphones_fails(self):
        added, _, _ = self.reports()
        for old, new in (('"type": "headphones"', '"type": "usbAudio"'), ("/headphones", "/output")):
            with self.subTest(new):
                changed = ucm.UcmUsbAdded.parse(added.report.replace(old, new))
                with self.assertRaisesRegex(Failure, "not the profile's Headphones"):
                    quietly(ucm.check_ucm_usb_port, changed, HDA_OUTPUTS, None)
        with self.assertRaisesRegex(Failure, "the re-added USB card's port is .*, not usb-other/headphones as before"):
            quietly(ucm.check_ucm_usb_port, added, HDA_OUTPUTS, "usb-other/headphones")

    def test_the_route_left_on_the_speaker_fails(self):
        added, _, _ = self.reports()
        status = added.report[added.report.index("{"):]
        route = status[:status.index(', "ports"')]
        changed = ucm.UcmUsbAdded.parse(added.report.replace(route, '{"route": {"inputs": [], "outputs": [{"uid": "pci-0000:00:04.0/speaker"}]}'))
        with self.assertRaisesRegex(Failure, r"the route's outputs are \['pci-0000:00:04.0/speaker'\], expected \[usb"):
            quietly(ucm.check_ucm_usb_port, changed, HDA_OUTPUTS, None)

    def test_controls_a_helper_or_outputs_not_as_the_profiles_fail(self):
        added, removed, memory = self.reports()
        cases = [(ucm.UcmUsbAdded.parse(added.report.replace("switch=off,off", "switch=on,off")), removed, memory.processes,
                  "the USB card's switch and volume and the HDA card's switch are"),
                 (added, ucm.UcmUsbRemoved.parse(removed.report.replace("switch=on,off", "switch=off,off")), memory.processes,
                  "and the HDA card's switch off,off, expected"),
                 (added, ucm.UcmUsbRemoved.parse(removed.report.replace('[{"uid": ', f'[{{"uid": "{USB_HEADPHONES}", "direction": "output"}}, {{"uid": ', 1)),
                  memory.processes, "after the removal the outputs are"),
                 (added, removed, memory.processes * 2, "2 audioroute-ucm processes with both cards up")]
        for added_, removed_, processes, message in cases:
            with self.subTest(message), self.assertRaisesRegex(Failure, message):
                ucm.check_ucm_usb_after(added_, removed_, processes, HDA_OUTPUTS)


if __name__ == "__main__":
    unittest.main()
