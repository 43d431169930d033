"""The sound-server bench's profile phase, host side (realkernel.server.phases.check_profile), on
reports written as the guest says them (bench/guest/server/profile.sh): it passes when the card's
profile came back with an output, the card's file has the tone and the profile gained an input;
each fault fails it by name."""
import unittest

from fake_guest import FakeGuest, quietly
from realkernel.common import Failure
from realkernel.server import phases

CARD = "alsa_card.pci-0000_00_04.0"
DUPLEX = "output:analog-stereo+input:analog-stereo"
LINES = [
    f"profile-start {CARD} {DUPLEX} outputs: pci-0000:00:04.0/speaker",
    "profile-off",
    f"profile-restored {DUPLEX} alsa_output.pci-0000_00_04.0.analog-stereo",
    "profile-playing alsa_output.pci-0000_00_04.0.analog-stereo",
    "profile-output output:analog-stereo",
    f"profile-input {DUPLEX} alsa_input.pci-0000_00_04.0.analog-stereo inputs: pci-0000:00:04.0/mic",
    f"profile-done {DUPLEX}",
]


class ToneFiles:
    """Guest.files with the HDA card's first loud frame after any moment (or none)."""

    def __init__(self, heard):
        self.heard = heard

    def gain(self, data):
        pass

    def first_onset(self, name, after):
        assert name == "hda", name
        return after + 0.5 if self.heard else None


def guest(lines=LINES, heard=True):
    fake = FakeGuest([(b"", line) for line in lines])
    fake.files = ToneFiles(heard)
    return fake


def replaced(words, line):
    return [line if l.split()[0] == words else l for l in LINES]


class ProfilePhase(unittest.TestCase):
    def test_a_profile_back_with_an_output_the_tone_and_an_input_pass(self):
        _, printed = quietly(phases.check_profile, guest(), "pw-play")
        self.assertIn(f"{CARD}: {DUPLEX}; set off, then {DUPLEX}", printed)
        self.assertIn("the HDA card's file has its tone", printed)

    def test_the_pulseaudio_guests_player_is_named(self):
        _, printed = quietly(phases.check_profile, guest(), "paplay")
        self.assertIn("paplay's stream on", printed)

    def test_a_card_left_off_fails(self):
        with self.assertRaisesRegex(Failure, "the HDA card's profile stayed off after it was set off"):
            quietly(phases.check_profile, guest(replaced("profile-restored", "profile-restored off alsa_output.dummy")), "pw-play")

    def test_a_card_set_to_pro_audio_fails(self):
        with self.assertRaisesRegex(Failure, "stayed pro-audio"):
            quietly(phases.check_profile, guest(replaced("profile-restored", "profile-restored pro-audio x")), "pw-play")

    def test_no_tone_in_the_cards_file_fails(self):
        with self.assertRaisesRegex(Failure, "the HDA card's file has no tone after its profile came back"):
            quietly(phases.check_profile, guest(heard=False), "pw-play")

    def test_an_output_only_profile_changed_without_need_fails(self):
        with self.assertRaisesRegex(Failure, "output:analog-stereo serves the speaker and was not kept"):
            quietly(phases.check_profile, guest(replaced("profile-output", f"profile-output {DUPLEX}")), "pw-play")

    def test_no_input_while_the_route_records_fails(self):
        line = "profile-input output:analog-stereo alsa_input.pci-0000_00_04.0.analog-stereo inputs:"
        with self.assertRaisesRegex(Failure, "its profile has no input or the default source is not the card's"):
            quietly(phases.check_profile, guest(replaced("profile-input", line)), "pw-play")

    def test_another_default_source_fails(self):
        line = f"profile-input {DUPLEX} alsa_input.usb-Headset.mono-fallback"
        with self.assertRaisesRegex(Failure, "the default source is not the card's"):
            quietly(phases.check_profile, guest(replaced("profile-input", line)), "pw-play")


if __name__ == "__main__":
    unittest.main()
