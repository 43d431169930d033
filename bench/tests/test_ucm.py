"""The UCM phase's checks: a step's controls and levels against the bench's UCM configuration
(Tests/Fixtures/ucm2-bench: HiFi sets the Master amp to 74 of 74 steps, Voice Call to 37, which
QEMU applies linearly; the Speaker is the amp's left channel, the Earpiece its right), and the
controls' states and the memory reports in a recorded UCM phase (fixtures/ucm-phase.console)."""
import unittest

from fake_guest import quietly, recorded
from realkernel.common import Failure
from realkernel.reports import memory_report
from realkernel.ucm import STEP_EVENTS, check_ucm_controls, print_memory, ucm_check_step

REFERENCE = 10000  # the music's level on the Speaker with HiFi
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


if __name__ == "__main__":
    unittest.main()
