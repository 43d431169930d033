"""The Bluetooth bench's phases: each names its guest script, which parses and which the image
packs where bluetooth-checks.sh sources it; the checks of its logs (check_logs) on a recorded run
(fixtures/bluetooth-run.console) and on reports changed to a fault; what reached the headset
from guest-ear's reports."""
import os
import re
import subprocess
import unittest

from benchpath import GUEST
from fake_guest import quietly, recorded
from realkernel.bluetooth import image, pairing
from realkernel.bluetooth.logs import ear_at, first_ear_after, loud_between
from realkernel.bluetooth_bench import check_logs

HEADSET = "00:AA:01:01:00:01"  # "addresses computer 00:AA:01:00:00:00 headset 00:AA:01:01:00:01"
A2DP = f"bt:{HEADSET}:a2dp"


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
