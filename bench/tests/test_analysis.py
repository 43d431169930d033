"""The bench's audio analysis on synthesized signals: where the numbered signal is (locate), how
its timeline breaks, a move's frames, a tone's level (Goertzel), a recording against the mic's."""
import unittest

from signal_support import bits, mix, signal, silence, stereo, tone
from realkernel.analysis import check_recording, frames_at_move, goertzel, left, locate, signed_frames, timeline_breaks, tone_frequency
from realkernel.common import Failure
from realkernel.signals import MUSIC_HZ, PROMPT_HZ, RATE, SEQUENCE_DEGREE, SEQUENCE_PERIOD, WINDOW


class Sequence(unittest.TestCase):
    def test_it_is_a_maximal_length_sequence(self):
        # x^21 + x^19 + 1 is primitive: one period holds 2^20 ones and 2^20 - 1 zeros.
        sequence = bits()
        self.assertEqual(len(sequence), SEQUENCE_PERIOD)
        self.assertEqual(sequence.count(1), 1 << (SEQUENCE_DEGREE - 1))
        self.assertEqual(sequence.count(0), (1 << (SEQUENCE_DEGREE - 1)) - 1)

    def test_differences_of_places_go_the_short_way_round(self):
        self.assertEqual(signed_frames(100), 100)
        self.assertEqual(signed_frames(-100), -100)
        self.assertEqual(signed_frames(SEQUENCE_PERIOD - 5), -5)


class Locate(unittest.TestCase):
    def test_a_run_is_placed_whatever_the_gain(self):
        samples = silence(500) + signal(123456, 20000, gain=0.3) + silence(700)
        self.assertEqual(locate(samples, bits()), [(500, 123456, 20000)])

    def test_fewer_than_32_frames_are_not_placed(self):
        samples = silence(100) + signal(5000, 31) + silence(100)
        self.assertEqual(locate(samples, bits()), [])

    def test_a_skip_and_a_repeat_split_the_runs_and_move_the_timeline(self):
        samples = signal(100000, 4800) + signal(104800 + 960, 4800) + signal(104800 + 960 + 4800 - 480, 4800)
        runs = locate(samples, bits())
        # Where a run ends is exact only to within the frames after a break that happen to continue
        # the sequence (each does by chance, one in two): the runs' offsets are what is certain.
        self.assertEqual([place - i for i, place, _ in runs], [100000, 100960, 100480])
        self.assertTrue(all(abs(i - start) <= 16 for (i, _, _), start in zip(runs, (0, 4800, 9600))), runs)
        self.assertEqual(timeline_breaks(runs), ([960, -480], []))

    def test_frames_replaced_in_place_are_a_glitch_that_keeps_the_timeline(self):
        # An underrun under dmix: 240 frames (5 ms) of silence in place of the signal's.
        samples = signal(200000, 9600)
        samples[4800:5040] = silence(240)
        runs = locate(samples, bits())
        self.assertEqual(len(runs), 2)
        self.assertEqual(timeline_breaks(runs), ([], [240]))
        # Beyond 10 ms it is a jump, even in place.
        samples = signal(200000, 9600)
        samples[4800:5400] = silence(600)
        self.assertEqual(timeline_breaks(locate(samples, bits())), ([600], []))

    def test_misses_bound_the_search_through_foreign_data(self):
        samples = tone(MUSIC_HZ, 0.005, 20000) + signal(3000, 4800)
        self.assertEqual([(place - i, n) for i, place, n in locate(samples, bits())], [(3000 - 240, 4800)])
        self.assertEqual(locate(samples, bits(), misses=5), [])


class Moves(unittest.TestCase):
    def test_frames_lost_and_played_twice_at_a_move(self):
        before = [(0, 60000, 48000)]          # the old card played up to place 108000
        self.assertEqual(frames_at_move(before, [], [(0, 108480, 48000)], "cycle 1", "aplay"), (108480, 108000, 480))
        self.assertEqual(frames_at_move(before, [], [(0, 107000, 48000)], "cycle 1", "aplay"), (107000, 108000, -1000))

    def test_the_old_cards_runs_after_the_add_count_when_they_come_before_the_new_cards_first(self):
        # The old card's last 4 KiB reach its file only when it plays again.
        self.assertEqual(frames_at_move([(0, 60000, 40000)], [(0, 100000, 8000), (8000, 300000, 1000)], [(0, 108100, 1000)],
                                        "cycle 1", "aplay"), (108100, 108000, 100))

    def test_a_client_that_started_over_fails(self):
        with self.assertRaisesRegex(Failure, "started over"):
            frames_at_move([(0, 60000, 48000)], [], [(0, 100, 48000)], "plugin cycle 2", "aplay")


class Goertzel(unittest.TestCase):
    def test_a_tones_level_in_each_window(self):
        samples = mix(tone(MUSIC_HZ, 0.2, 8000), tone(PROMPT_HZ, 0.2, 2000))
        music, prompt = goertzel(samples, 0, len(samples), MUSIC_HZ), goertzel(samples, 0, len(samples), PROMPT_HZ)
        self.assertEqual(len(music), len(samples) // WINDOW)
        for level in music:
            self.assertAlmostEqual(level, 8000, delta=8000 * 0.01)
        for level in prompt:
            self.assertAlmostEqual(level, 2000, delta=2000 * 0.01)
        self.assertLess(max(goertzel(samples, 0, len(samples), 900.0)), 50)

    def test_windows_stay_inside_the_samples(self):
        samples = tone(MUSIC_HZ, 0.1, 8000)
        self.assertEqual(len(goertzel(samples, -500, len(samples) + 5000, MUSIC_HZ)), len(samples) // WINDOW)
        self.assertEqual(goertzel(samples, 0, WINDOW - 1, MUSIC_HZ), [])

    def test_left_takes_the_left_channel_of_whole_frames(self):
        data = stereo(signal(0, 100), silence(100)) + b"\x01\x02"
        self.assertEqual(list(left(data)), list(signal(0, 100)))


class Recording(unittest.TestCase):
    def test_a_clean_recording_after_a_start_of_silence(self):
        data = stereo(silence(4800) + signal(7000, RATE))
        summary, faults, first, end = check_recording(data, bits(), "the recording")
        self.assertEqual(faults, [], summary)
        self.assertEqual((first, end), (7000, 7000 + RATE))

    def test_a_break_is_counted_as_frames_lost(self):
        data = stereo(silence(100) + signal(7000, 24000) + signal(7000 + 24000 + 480, 24000))
        _, faults, _, _ = check_recording(data, bits(), "the recording")
        self.assertEqual(len(faults), 1)
        self.assertIn("breaks 1 times: 480 frames lost, 0 repeated", faults[0])

    def test_channels_that_differ_are_off_level(self):
        samples = signal(7000, 24000)
        data = stereo(samples, signal(7000, 24000, gain=0.5))
        _, faults, _, _ = check_recording(data, bits(), "the recording")
        self.assertEqual(faults, ["the recording: 24000 frames of the signal differ between channels or from the level 24000"])

    def test_more_than_a_second_of_silence_first_and_foreign_data(self):
        data = stereo(silence(RATE + 10) + signal(7000, 9600) + tone(MUSIC_HZ, 0.01, 20000))
        _, faults, _, _ = check_recording(data, bits(), "the recording")
        self.assertTrue(any("more than 1 s" in f for f in faults), faults)
        self.assertTrue(any("480 frames after the start are not the signal" in f for f in faults), faults)

    def test_nothing_of_the_signal(self):
        _, faults, first, end = check_recording(stereo(tone(MUSIC_HZ, 0.05, 20000)), bits(), "the recording")
        self.assertEqual((first, end), (None, None))
        self.assertEqual(faults, ["the recording: none of its 2400 frames is the mic's signal"])


if __name__ == "__main__":
    unittest.main()


class ToneFrequency(unittest.TestCase):
    def test_a_tones_frequency_and_length_between_silences(self):
        frequency, seconds = tone_frequency(silence(4800) + tone(MUSIC_HZ, 2, 10000) + silence(9600))
        self.assertAlmostEqual(frequency, MUSIC_HZ, delta=0.5)
        self.assertAlmostEqual(seconds, 2, delta=0.01)
        frequency, _ = tone_frequency(tone(MUSIC_HZ * 44100 / 48000, 1, 10000))
        self.assertAlmostEqual(frequency, 459.4, delta=0.5)

    def test_silence_has_none(self):
        self.assertEqual(tone_frequency(silence(48000)), (0.0, 0.0))
        self.assertEqual(tone_frequency(tone(MUSIC_HZ, 1, 500)), (0.0, 0.0))
