"""The hardware phase's check on its recorded reports (fixtures/hardware-phase.console) and on
reports changed to a fault: the session's rate, channels and period against the card's hw_params."""
import unittest

from fake_guest import FakeGuest, quietly, recorded
from signal_support import stereo, tone
from realkernel import hardware
from realkernel.common import Failure
from realkernel.signals import MUSIC_HZ

# What QEMU's file of the HDA card gains while the preferred-rate stream plays: its 3 s of the
# music (the guest's music.wav, mono at 10000) at the file's 48 kHz.
MUSIC = stereo(tone(MUSIC_HZ, 3, 10000))
# The HDA card's periods in the recorded run through the plugin on its hw device (hw_params), without
# AUDIOROUTE_IO_BUFFER_DURATION and with 5000 µs.
DEFAULT_PERIOD = "2400"
SHORT_PERIOD = "1200"


def guest(lines, music=MUSIC):
    """The recorded reports, the card's file gaining `music` before `hardware-rate-dmix-done`."""
    return FakeGuest([(music if line.startswith("hardware-rate-dmix-done ") else b"", line) for line in lines])


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
        # The kernel's controls: the HDA codec's Master, 0..74 in 1 dB steps from -74 dB (no mute),
        # at -20 dB, then -37 dB; the USB card's, dBminmax -127.99..8 dB over 0..256.
        self.assertIn("HDA card (as found): 'Master' raw 54 in 0..74, -2000 in -7400..0", printed)
        self.assertIn("HDA card (after amixer sset 50%): 'Master' raw 37 in 0..74, -3700 in -7400..0", printed)
        self.assertIn("USB card (after amixer sset 50%): 'Audio Output Volume Control' raw 128 in 0..256", printed)
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

    def test_another_volume_than_alsamixers_fails(self):
        # outputVolume scaled on the host's side: 0.4309 read as 0.4409.
        lines = self.changed("hardware-idle", '"outputVolume": 0.430', '"outputVolume": 0.440')
        with self.assertRaisesRegex(Failure, r"HDA card \(as found\): outputVolume 0.440\d+, alsamixer's value of 'Master' is 0.4309"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_volume_that_does_not_follow_amixer_fails(self):
        # The session still reads the USB card's volume as found after amixer set it to 50%.
        lines = self.changed("hardware-usb-set", '"outputVolume": 0.0685', '"outputVolume": 0.7201')
        with self.assertRaisesRegex(Failure, r"USB card \(after amixer sset 50%\): outputVolume 0.7201\d*, alsamixer's value .* is 0.0685"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_set_value_off_the_middle_or_off_the_tlv_fails(self):
        lines = self.changed("hardware-mixer-set", "Front Left: Playback 37 [50%] [-37.00dB]", "Front Left: Playback 38 [50%] [-37.00dB]")
        with self.assertRaisesRegex(Failure, r"HDA card: after amixer sset 50% 'Master' is at raw 38, not the middle of 0..74"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_the_preferred_rate_on_dmix_plays_at_dmixs(self):
        _, printed = quietly(hardware.check_hardware, guest(self.lines), lambda g: None)
        # The kernel's hw_params of the HDA card while the 48 kHz music played through its dmix
        # with 44.1 kHz preferred, and what the session read then (the recorded lines).
        self.assertIn("the card's dmix: its hw_params {'access': 'MMAP_INTERLEAVED', 'format': 'S16_LE', 'subformat': 'STD', "
                      "'channels': '2', 'rate': '48000'", printed)
        self.assertIn("audioroute hardware --rate 44100: sampleRate 48000.0", printed)
        self.assertIn("the preferred rate, the card's dmix: the card's file holds 3.00 s of a 500.0 Hz tone", printed)

    def test_music_played_at_the_wrong_rate_fails(self):
        # 48 kHz frames played as 44.1 kHz ones: the tone 8 % low in the card's file.
        low = stereo(tone(MUSIC_HZ * 44100 / 48000, 3, 10000))
        with self.assertRaisesRegex(Failure, r"the card's dmix: the music's tone is 459.4 Hz in the card's file, not 500 Hz"):
            quietly(hardware.check_hardware, guest(self.lines, music=low), lambda g: None)

    def test_music_that_did_not_reach_the_card_fails(self):
        with self.assertRaisesRegex(Failure, r"the card's dmix: the card's file holds 0.00 s of the music, not 2.0 s"):
            quietly(hardware.check_hardware, guest(self.lines, music=b""), lambda g: None)

    def test_a_session_rate_other_than_dmixs_fails(self):
        lines = self.changed("hardware-rate-dmix-open", '"sampleRate": 48000.0', '"sampleRate": 44100.0')
        with self.assertRaisesRegex(Failure, r"the preferred rate on dmix: sampleRate 44100.0, the card runs at 48000"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_fallback_not_said_fails(self):
        lines = [line.split(" ", 1)[0] + " " if line.startswith("hardware-rate-dmix-done ") else line for line in self.lines]
        with self.assertRaisesRegex(Failure, r"the stream's standard error does not say it does not run at the session's preferred "
                                    r"44100 Hz: it runs at 48000 Hz"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_busy_device_reads_0_from_a_fresh_process(self):
        _, printed = quietly(hardware.check_hardware, guest(self.lines), lambda g: None)
        # The recorded run: the hw device idle at the card's 48 kHz; held by aplay, 0 each.
        self.assertIn("busy hw device: idle {'sampleRate': 48000.0", printed)
        self.assertIn("a fresh audioroute hardware: {'sampleRate': 0.0, 'ioBufferDuration': 0.0, 'outputLatency': 0.0", printed)

    def test_a_value_made_up_for_a_busy_device_fails(self):
        lines = self.changed("hardware-busy-open", '"sampleRate": 0.0', '"sampleRate": 48000.0')
        with self.assertRaisesRegex(Failure, r"busy hw device: a fresh process read \{'sampleRate': 48000.0\} while aplay held the device"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_route_that_reads_nothing_idle_fails(self):
        lines = self.changed("hardware-busy-idle", '"sampleRate": 48000.0', '"sampleRate": 0.0')
        with self.assertRaisesRegex(Failure, r"busy hw device: idle, the route reads sampleRate 0.0"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_the_io_buffer_reaches_the_card(self):
        _, printed = quietly(hardware.check_hardware, guest(self.lines), lambda g: None)
        # The recorded run: 10 ms and 5 ms pieces at 48 kHz, ten ahead, and the card's periods.
        self.assertIn("I/O buffer default: the plugin's pieces 480 frames, 4800 ahead; aplay's period 4800", printed)
        self.assertIn("I/O buffer 5 ms: the plugin's pieces 240 frames, 2400 ahead; aplay's period 4800", printed)
        self.assertIn(f"'period_size': '{DEFAULT_PERIOD}'", printed)
        self.assertIn(f"'period_size': '{SHORT_PERIOD}'", printed)

    def test_pieces_other_than_asked_fail(self):
        lines = self.changed("hardware-io-5ms-done", "pieces of 240 frames", "pieces of 480 frames")
        with self.assertRaisesRegex(Failure, r"I/O buffer 5 ms: the plugin's pieces are 480 frames, 5000 µs at 48000 Hz is 240"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_card_period_other_than_the_plugins_fails(self):
        lines = self.changed("hardware-io-default-card", f"period_size: {DEFAULT_PERIOD}|", "period_size: 1024|")
        with self.assertRaisesRegex(Failure, r"I/O buffer default: the card's period is 1024 frames, the plugin's device period 2400"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_queue_left_at_10_ms_pieces_does_not_reach_the_card(self):
        # 5 ms pieces but the queue (and so the device's period) of 10 ms ones: the card as without.
        lines = self.changed("hardware-io-5ms-done", "240 frames, 2400 ahead", "240 frames, 4800 ahead")
        lines = [line.replace(f"period_size: {SHORT_PERIOD}|", f"period_size: {DEFAULT_PERIOD}|") if line.startswith("hardware-io-5ms-card ")
                 else line for line in lines]
        with self.assertRaisesRegex(Failure, rf"the card's period with 5000 µs is {DEFAULT_PERIOD} frames, without it {DEFAULT_PERIOD}: "
                                    r"the preferred I/O buffer does not reach the card"):
            quietly(hardware.check_hardware, guest(lines), lambda g: None)

    def test_a_stream_without_the_plugins_trace_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'hardware-io-default-done': no trace of the plugin's pieces"):
            hardware.HardwareIoDone.parse("hardware-io-default-done   period_size  : 4800|")

    def test_a_report_without_json_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'hardware-idle': `audioroute hardware --json` printed no JSON: Error"):
            hardware.HardwareIdle.parse("hardware-idle Error: no route")


def mixer(words, raw, dB, tlv, limits="0 - 254"):
    """An amixer report as the guest joins it (amixer 1.2.8's sget and cget layout)."""
    return (f"{words} PCM|Simple mixer control 'PCM',0|  Capabilities: pvolume pswitch|  Playback channels: Front Left - Front Right|"
            f"  Limits: Playback {limits}|  Mono:|  Front Left: Playback {raw} [50%] [{dB}dB] [on]|"
            f"  Front Right: Playback {raw} [50%] [{dB}dB] [on]|numid=2,iface=MIXER,name='PCM Playback Volume'|"
            f"  ; type=INTEGER,access=rw---R--,values=2,min=0,max=254,step=0|  : values={raw},{raw}|  | {tlv}|")


class AlsamixerScale(unittest.TestCase):
    """alsamixer's mapping (alsa-utils' volume_mapping.c), worked by hand: 10^((dB - max)/60) over a
    range wider than 24 dB, rescaled so its minimum is 0 unless that minimum is a mute; linear in dB
    over a narrower one; the raw fraction without dB."""

    def value(self, raw, dB, tlv, limits="0 - 254"):
        return hardware.HardwareMixer.parse(mixer("hardware-mixer", raw, dB, tlv, limits)).perceptual()

    def test_a_wide_range_with_a_mute_minimum_is_the_cube_root_curve(self):
        # dBminmaxmute: the minimum is a mute (alsa-lib's tlv.c); -60 dB below the maximum is 10^-1.
        self.assertAlmostEqual(self.value(100, "-60.00", "dBminmaxmute-min=-127.00dB,max=0.00dB"), 0.1, places=6)
        # dBscale with mute=1, step 0.5 dB over 254 steps: the maximum is -127 + 127 = 0 dB; -20 dB is 10^(-1/3).
        self.assertAlmostEqual(self.value(214, "-20.00", "dBscale-min=-127.00dB,step=0.50dB,mute=1"), 10 ** (-1 / 3), places=6)

    def test_a_wide_range_without_a_mute_starts_at_zero(self):
        tlv = "dBscale-min=-63.50dB,step=0.25dB,mute=0"
        # 254 steps of 0.25 dB: -63.5 to 0 dB.
        self.assertAlmostEqual(self.value(0, "-63.50", tlv), 0.0, places=6)
        self.assertAlmostEqual(self.value(254, "0.00", tlv), 1.0, places=6)
        floor = 10 ** (-63.5 / 60)
        self.assertAlmostEqual(self.value(134, "-30.00", tlv), (10 ** -0.5 - floor) / (1 - floor), places=6)

    def test_a_db_range_spans_its_sub_ranges(self):
        # amixer's dBrange layout (BlueALSA's A2DP control has one): -96 to -70 dB on raw 0..1, then 1 dB
        # steps from -60 dB on 2..62 (up to 0 dB): the range is -96..0 dB, with no mute.
        tlv = ("dBrange-|    rangemin=0,,rangemax=1|      | dBminmax-min=-96.00dB,max=-70.00dB|"
               "    rangemin=2,,rangemax=62|      | dBscale-min=-60.00dB,step=1.00dB,mute=0")
        element = hardware.HardwareMixer.parse(mixer("hardware-mixer", 2, "-60.00", tlv, "0 - 62"))
        self.assertEqual((element.dB_min, element.dB_max), (-9600, 0))
        floor = 10 ** (-96 / 60)
        self.assertAlmostEqual(element.perceptual(), (10 ** -1 - floor) / (1 - floor), places=6)

    def test_a_narrow_range_is_linear_in_db(self):
        # 24 dB from -24 to 0: -6 dB is three quarters.
        self.assertAlmostEqual(self.value(1, "-6.00", "dBminmax-min=-24.00dB,max=0.00dB"), 0.75, places=6)

    def test_without_db_the_raw_fraction(self):
        line = mixer("hardware-mixer", 31, "0", "", "0 - 124").replace(" [0dB]", "").replace("| |", "|")
        self.assertAlmostEqual(hardware.HardwareMixer.parse(line).perceptual(), 0.25, places=6)

    def test_a_report_without_an_element_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'hardware-mixer': amixer shows no playback element"):
            hardware.HardwareMixer.parse("hardware-mixer |amixer: Unable to find simple control 'PCM',0|")


if __name__ == "__main__":
    unittest.main()
