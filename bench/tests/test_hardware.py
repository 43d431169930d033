"""The hardware phase's check on its recorded reports (fixtures/hardware-phase.console) and on
reports changed to a fault: the session's rate, channels and period against the card's hw_params."""
import unittest

from fake_guest import FakeGuest, quietly, recorded
from realkernel import hardware
from realkernel.common import Failure


def guest(lines):
    return FakeGuest([(b"", line) for line in lines])


class HardwarePhase(unittest.TestCase):
    lines = recorded("hardware-phase.console")

    def test_the_recorded_phase_passes_and_plugs_the_usb_card(self):
        plugged = []
        fake = guest(self.lines)
        _, printed = quietly(hardware.check_hardware, fake, lambda g: plugged.append(g))
        # The cards' hw_params as the kernel wrote them: 48 kHz, 2 channels, periods of 1024 frames.
        self.assertEqual(plugged, [fake])
        self.assertIn("HDA card (idle): period 1024 frames", printed)
        self.assertIn("USB card (while playing): period 1024 frames", printed)
        self.assertEqual(fake.commands, [("device_del", {"id": "usbcard"})])

    def changed(self, words, old, new):
        return [line.replace(old, new) if line.startswith(words + " ") else line for line in self.lines]

    def test_another_rate_than_the_cards_fails(self):
        lines = self.changed("hardware-card", "rate: 48000", "rate: 44100")
        with self.assertRaisesRegex(Failure, r"HDA card \(idle\): sampleRate 48000.0, the card runs at 44100"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_another_channel_count_than_the_cards_fails(self):
        lines = self.changed("hardware-usb-open", '"outputNumberOfChannels": 2', '"outputNumberOfChannels": 6')
        with self.assertRaisesRegex(Failure, r"USB card \(while playing\): outputNumberOfChannels 6, the card has 2"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_another_period_than_the_cards_fails(self):
        lines = self.changed("hardware-usb-card", "period_size: 1024", "period_size: 512")
        with self.assertRaisesRegex(Failure, r"USB card \(idle\): ioBufferDuration is 1024 frames, the card's period 512"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_report_without_json_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'hardware-idle': `audioroute hardware --json` printed no JSON: Error"):
            hardware.HardwareIdle.parse("hardware-idle Error: no route")


if __name__ == "__main__":
    unittest.main()
