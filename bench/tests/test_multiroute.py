"""The multiRoute phase's analysis on synthesized card files: its markers found to the frame in the
music, whatever the card's gain, and the drift between two files."""
import array
import os
import tempfile
import unittest
from unittest import mock

from fake_guest import quietly
from signal_support import bits, signal, silence
from realkernel.common import Failure
from realkernel import multiroute
from realkernel.multiroute import (MultirouteBegin, MultirouteDone, MultirouteEnd, MultirouteUnplugDone, MultirouteUnplugged, drift, find_marks,
                                   gaps, music_levels, offsets_ms, played_at)
from realkernel.signals import MULTIROUTE_MARK_FRAMES, RATE, multiroute_marks, write_multiroute_music


def music():
    """One file of the phase's music (as the guest plays it), mono samples."""
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "multiroute.raw")
        write_multiroute_music(path, bits())
        with open(path, "rb") as f:
            return array.array("h", f.read())


def scaled(samples, gain):
    return array.array("h", (int(x * gain) for x in samples))


class Markers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.music = music()

    def test_every_marker_is_found_where_it_was_played_whatever_the_gain(self):
        for lead, gain in ((0, 1.0), (12345, 0.4)):
            with self.subTest(gain=gain):
                card = silence(lead) + scaled(self.music, gain) + scaled(self.music, gain)
                found = find_marks(card, bits())
                expected = [(lead + frame, k) for k, (frame, _) in enumerate(multiroute_marks())]
                expected += [(start + len(self.music), k) for start, k in expected]
                self.assertEqual(found, expected)
                for level in music_levels(card, found):
                    self.assertAlmostEqual(level, 1.0, delta=0.05)

    def test_a_frame_dropped_inside_a_marker_still_places_it(self):
        frame = multiroute_marks()[1][0]
        card = self.music[:frame + 100] + self.music[frame + 101:]
        found = find_marks(card, bits())
        self.assertEqual([k for _, k in found], [0, 1, 2])
        self.assertEqual(found[1][0], frame)
        self.assertEqual(found[2][0], multiroute_marks()[2][0] - 1)

    def test_a_long_loud_signal_before_the_music_is_passed_over_quickly(self):
        # The cycles' signal (the sequence from 0, loud throughout) in the same file, before.
        card = signal(0, 5 * RATE) + self.music
        found = find_marks(card, bits())
        self.assertEqual(found, [(5 * RATE + frame, k) for k, (frame, _) in enumerate(multiroute_marks())])

    def test_the_drift_is_each_offset_less_the_first(self):
        frames = [frame for frame, _ in multiroute_marks()]
        hda = [(f, k) for k, f in enumerate(frames)]
        usb = [(f + 500 + k * 3, k) for k, f in enumerate(frames)]
        self.assertEqual(drift(hda, usb), [0, 3, 6])

    def test_a_frame_is_played_when_its_read_held_it_less_the_frames_after_it(self):
        growth = [(10.0, 4 * 960), (10.02, 4 * 1920)]
        self.assertEqual(played_at(growth, 0), 10.0 - 960 / RATE)
        self.assertAlmostEqual(played_at(growth, 1000), 10.02 - 920 / RATE)
        self.assertIsNone(played_at(growth, 1920))
        # The USB card plays each marker 30 ms after the HDA card.
        hda_growth = [(1.0 + n, 4 * RATE * (n + 1)) for n in range(30)]
        usb_growth = [(1.03 + n, 4 * RATE * (n + 1)) for n in range(30)]
        marks = [(RATE * 5, 0), (RATE * 15, 1)]
        self.assertEqual([round(x, 3) for x in offsets_ms(marks, marks, hda_growth, usb_growth)], [30.0, 30.0])

    def test_the_music_missing_between_markers_reads_low(self):
        card = array.array("h", self.music)
        frame = multiroute_marks()[0][0]
        for n in range(frame + MULTIROUTE_MARK_FRAMES, frame + 3 * RATE):
            card[n] = 0
        levels = music_levels(card, find_marks(card, bits()))
        self.assertLess(levels[0], 0.1)
        self.assertAlmostEqual(levels[1], 1.0, delta=0.05)

    def test_the_music_has_no_gap_with_silence_around_it_or_frames_dropped_and_repeated(self):
        # Silence before and after the music is no gap; the plugin's corrections (a frame dropped,
        # one repeated 60 times: 1.25 ms) leave none.
        card = silence(RATE) + self.music[:RATE * 3] + self.music[RATE * 3 + 60:RATE * 4]
        card += array.array("h", [card[-1]] * 60) + self.music[RATE * 4:] + silence(RATE)
        self.assertEqual(gaps(card), [])

    def test_a_gap_in_the_music_is_found_where_it_is_at_its_length_whatever_the_gain(self):
        for gain in (1.0, 0.3):
            with self.subTest(gain=gain):
                music = scaled(self.music, gain)
                # 100 ms of silence 5 s in (the unplug), 20 ms 13 s in (the replug), and 5 ms (under 10 ms: not counted).
                card = silence(RATE) + music[:5 * RATE] + silence(4800) + music[5 * RATE:13 * RATE] + silence(960)
                card += music[13 * RATE:20 * RATE] + silence(240) + music[20 * RATE:] + silence(RATE)
                found = gaps(card)
                # Where the tone meets the silence it is near zero for a frame or two on either side.
                self.assertEqual(len(found), 2)
                for (frame, n), (at, length) in zip(found, ((6 * RATE, 4800), (14 * RATE + 4800, 960))):
                    self.assertLessEqual(abs(frame - at), 3)
                    self.assertLessEqual(abs(n - length), 6)


def stereo(samples):
    """S16 stereo bytes of a mono card file, as the card's WAV file holds them."""
    frames = array.array("h", bytes(4 * len(samples)))
    frames[0::2] = samples
    frames[1::2] = samples
    return frames.tobytes()


class UnplugGuest:
    """The unplug step's guest without QEMU: its reports in order, the two cards' files (all at
    once), their growth on a clock (`now`, seconds) that time.sleep moves on, as played from 0."""

    def __init__(self, reports, hda, usb, usb_at_replug, usb_growth, usb_back):
        self.reports, self.data = reports, {"hda": stereo(hda), "usb": stereo(usb)}
        self.usb_at_replug, self.usb_back, self.now, self.commands = usb_at_replug, usb_back, 0.0, []
        self.growth = {"hda": [(n / 50, min(len(self.data["hda"]), 4 * 960 * n)) for n in range(1, len(hda) // 960 + 2)],
                       "usb": usb_growth}
        self.files = self

    def capture(self, name):
        pass

    def mark(self, name):
        return self.usb_at_replug

    def take_growth(self, name):
        return self.growth[name]

    def take(self, name):
        return self.data[name]

    def first_onset(self, name, after):
        return self.usb_back if self.usb_back is not None and self.usb_back > after else None

    def wait_for(self, words, seconds=None):
        when, line = next((t, line) for t, line in self.reports if line.startswith(words + " ") or line == words)
        self.now = max(self.now, when)
        return line

    def command(self, execute, **arguments):
        self.commands.append((self.now, execute))


HEADPHONES, USB = "pci-0000:00:04.0/headphones", "usb-QEMU/output"
FILE_ONE = 'pcm.!audioroute_route {|  slave.pcm "dmix:CARD=Intel,DEV=2"|}|'
FILE_TWO = 'pcm.!audioroute_route {|  slave.pcm "dmix:CARD=Audio,DEV=0"|}|--|pcm.!audioroute_route_output_1 {|  slave.pcm "dmix:CARD=Intel,DEV=2"|}|'


def status(*uids):
    return '{"route": {"outputs": [' + ", ".join(f'{{"uid": "{u}"}}' for u in uids) + "]}}"


class UnplugStep(unittest.TestCase):
    """check_unplug on a synthesized step: the music starts as the guest says it plays (time 0),
    the USB card goes at 5 s and is back at 13 s (the music on it again from 15 s)."""

    @classmethod
    def setUpClass(cls):
        cls.music = music()

    def run_step(self, hda_gap=0.145, usb_end=5.02, unplugged=(HEADPHONES,), file_after=FILE_ONE, status_done=0, errors=0, back=True,
                 absence=3.2, usb_gap=0.0, jack_off=(USB,), replug_gap=0.3):
        m = self.music + self.music
        at, replug, off = int(5.04 * RATE), int(15 * RATE), int(25.3 * RATE)
        hda = m[:at] + silence(int(hda_gap * RATE)) + m[at:replug] + silence(int(replug_gap * RATE)) + m[replug:off] + m[off + int(absence * RATE):] + silence(RATE)
        after = m[15 * RATE:30 * RATE] + silence(int(usb_gap * RATE)) + m[30 * RATE:]
        usb = m[:5 * RATE] + (after if back else silence(0))
        usb_growth = [(t / 50, 4 * min(5 * RATE, t * 960)) for t in range(1, int(usb_end * 50) + 1)]
        usb_growth += [(15 + t / 50, 4 * (5 * RATE + t * 960)) for t in range(1, 45 * 50)]
        reports = [(0, "multiroute-unplug-playing"), (6, f"multiroute-unplugged alive {file_after} {status(*unplugged)}"),
                   (17, f"multiroute-replugged alive {FILE_TWO} {status(USB, HEADPHONES)}"),
                   (25.5, f"multiroute-jack-off alive {FILE_ONE.replace('Intel,DEV=2', 'Audio,DEV=0')} {status(*jack_off)}"),
                   (28.6, f"multiroute-jack-on alive {FILE_TWO} {status(USB, HEADPHONES)}"),
                   (61, f"multiroute-unplug-done {status_done} {errors} audioroute 1.0: move|")]
        guest = UnplugGuest(reports, hda, usb, 5 * RATE, usb_growth if back else usb_growth[:int(usb_end * 50)], 15.0 if back else None)

        def sleep(seconds):
            guest.now += seconds
        clock = mock.Mock(monotonic=lambda: guest.now, sleep=sleep)
        with mock.patch.object(multiroute, "time", clock), mock.patch.object(multiroute, "plug_usb", lambda g: g.command("device_add")):
            faults, printed = quietly(multiroute.check_unplug, guest, bits(), USB, HEADPHONES)
        self.assertEqual([execute for _, execute in guest.commands], ["device_del", "device_add"])
        self.assertEqual([when for when, _ in guest.commands], [multiroute.UNPLUG_AT, multiroute.REPLUG_AT])
        return faults, printed

    def test_a_step_as_the_bench_saw_it_passes(self):
        faults, printed = self.run_step()
        self.assertEqual(faults, [])
        self.assertIn("the USB card is the route's first output", printed)
        self.assertIn("at the unplug: [(145, ", printed)
        self.assertIn("the HDA card missed 3.20 s of the music while the jack was off (3.10 s between the reports)", printed)
        self.assertIn("the music back 2.00 s after device_add", printed)

    def test_a_gap_over_the_bound_at_the_unplug_fails(self):
        faults, _ = self.run_step(hda_gap=(multiroute.MOST_GAP_MS + 20) / 1000)
        self.assertEqual(len(faults), 1)
        self.assertIn(f"a gap of {multiroute.MOST_GAP_MS + 20} ms at the unplug", faults[0])

    def test_a_usb_file_that_grows_after_the_unplug_fails(self):
        faults, _ = self.run_step(usb_end=5 + multiroute.USB_END_SECONDS + 0.5)
        self.assertEqual(len(faults), 1)
        self.assertIn("the USB card's file grew until", faults[0])

    def test_a_route_that_keeps_the_usb_card_or_its_output_fails(self):
        faults, _ = self.run_step(unplugged=(USB, HEADPHONES), file_after=FILE_TWO)
        self.assertEqual(len(faults), 2)
        self.assertIn("after the unplug the route's outputs are", faults[0])
        self.assertIn("still names a further output", faults[1])

    def test_music_that_does_not_come_back_to_the_usb_card_fails(self):
        faults, _ = self.run_step(back=False)
        self.assertEqual(len(faults), 2)
        self.assertIn("[0] before the unplug and [] after the replug", faults[0])
        self.assertIn("did not come back to the USB card", faults[1])

    def test_the_headphones_heard_while_out_of_the_route_fails(self):
        faults, _ = self.run_step(absence=1.0)
        self.assertEqual(len(faults), 1)
        self.assertIn("the HDA card missed 1.00 s of the music while the jack was off", faults[0])

    def test_a_route_that_keeps_the_headphones_when_their_jack_is_off_fails(self):
        faults, _ = self.run_step(jack_off=(USB, HEADPHONES))
        self.assertEqual(len(faults), 1)
        self.assertIn("after the jack went off", faults[0])

    def test_a_gap_over_the_moves_bound_elsewhere_fails(self):
        faults, _ = self.run_step(replug_gap=(multiroute.MOST_MOVE_GAP_MS + 20) / 1000)
        self.assertEqual(len(faults), 1)
        self.assertIn(f"a gap of {multiroute.MOST_MOVE_GAP_MS + 20} ms (at most {multiroute.MOST_MOVE_GAP_MS}", faults[0])

    def test_a_gap_on_the_first_output_when_the_further_one_goes_fails(self):
        faults, _ = self.run_step(usb_gap=(multiroute.MOST_GAP_MS + 50) / 1000)
        self.assertEqual(len(faults), 1)
        self.assertIn("the USB card's music after the replug has gaps", faults[0])

    def test_aplay_failing_or_saying_an_error_fails(self):
        for status_done, errors in ((1, 0), (0, 1)):
            with self.subTest(status=status_done, errors=errors):
                faults, _ = self.run_step(status_done=status_done, errors=errors)
                self.assertEqual(len(faults), 1)
                self.assertIn("the unplug step's aplay exited", faults[0])


class Reports(unittest.TestCase):
    def test_the_phase_reports_parse(self):
        self.assertEqual(MultirouteBegin.parse("multiroute-begin 42").monitor_lines, 42)
        done = MultirouteDone.parse("multiroute-done 0 3 1 further output 1: x open|")
        self.assertEqual((done.status, done.drops, done.repeats, done.notes), (0, 3, 1, "further output 1: x open|"))
        end = MultirouteEnd.parse('multiroute-end 57 {"route": {"outputs": [{"uid": "spk"}]}}')
        self.assertEqual((end.monitor_lines, end.status["route"]["outputs"][0]["uid"]), (57, "spk"))
        with self.assertRaises(Failure):
            MultirouteDone.parse("multiroute-done zero")
        unplugged = MultirouteUnplugged.parse('multiroute-unplugged alive pcm.!audioroute_route {|  type plug|  slave.pcm "dmix:CARD=Intel,DEV=2"|} '
                                              '{"route": {"outputs": [{"uid": "hp"}]}}')
        self.assertEqual((unplugged.alive, unplugged.status["route"]["outputs"][0]["uid"]), ("alive", "hp"))
        self.assertIn('slave.pcm "dmix:CARD=Intel,DEV=2"', unplugged.route_file)
        done = MultirouteUnplugDone.parse("multiroute-unplug-done 1 2 aplay: pcm_write:2146: write error: No such device|")
        self.assertEqual((done.status, done.errors, done.notes), (1, 2, "aplay: pcm_write:2146: write error: No such device|"))
        with self.assertRaises(Failure):
            MultirouteUnplugDone.parse("multiroute-unplug-done 0")


if __name__ == "__main__":
    unittest.main()
