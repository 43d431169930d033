"""The tower's phases' checks (duck, silent mode, call, the tower lost) on synthesized HDA files:
the tones at the levels the tower's decisions give, and at levels they must not; and with the
reports a run recorded (fixtures/tower-phase.console) in place of the written ones."""
import unittest

from fake_guest import FakeGuest, quietly, recorded
from signal_support import mix, silence, stereo, tone
from realkernel.common import Failure
from realkernel.signals import AMBIENT_HZ, CALL_HZ, MUSIC_HZ, PROMPT_HZ
from realkernel import tower
from realkernel.tower import check_call, check_duck, check_silent, check_tower_lost

LEVEL = 8000  # the tones' level in the card's file


def music(seconds, gain=1.0, frequency=MUSIC_HZ):
    return tone(frequency, seconds, int(LEVEL * gain))


def duck_script(ducked=0.3, prompt_exit="0", after=1.0):
    """The duck phase as the guest runs it: 1.5 s of music, a report, 1.5 s, the prompt for 3.5 s
    over the music at `ducked`, 1 s, a report, 1.5 s, the last report."""
    return [(stereo(music(1.5)), "duck-before"),
            (stereo(music(1.5)), "duck-prompt"),
            (stereo(mix(music(3.5, ducked), tone(PROMPT_HZ, 3.5, LEVEL)) + music(1.0, after)), f"duck-after {prompt_exit} |"),
            (stereo(music(1.5, after)), "duck-end alive")]


class Duck(unittest.TestCase):
    def test_the_music_ducked_to_0_3_under_the_prompt_and_back(self):
        _, printed = quietly(check_duck, FakeGuest(duck_script()))
        self.assertIn("under the prompt (0.30x)", printed)

    def test_music_not_ducked_fails(self):
        with self.assertRaisesRegex(Failure, "expected the duck gain 0.3"):
            quietly(check_duck, FakeGuest(duck_script(ducked=1.0)))

    def test_music_not_back_after_the_prompt_fails(self):
        with self.assertRaisesRegex(Failure, "expected back to full"):
            quietly(check_duck, FakeGuest(duck_script(after=0.3)))

    def test_a_prompt_whose_aplay_failed_fails(self):
        with self.assertRaisesRegex(Failure, "the prompt was not heard for 1 s"):
            quietly(check_duck, FakeGuest(duck_script(prompt_exit="1")))


def silent_script(silenced=0.0, back=1.0):
    tone_ = lambda seconds, gain=1.0: stereo(music(seconds, gain, AMBIENT_HZ))  # noqa: E731
    return [(tone_(1.5), "silent-before"), (tone_(1.5), "silent-switch"), (tone_(0.7, silenced), "silent-on"),
            (tone_(1.5, silenced), "silent-on-end alive"), (tone_(0.7, back), "silent-off"), (tone_(1.5, back), "silent-end alive")]


class Silent(unittest.TestCase):
    def test_silenced_then_back(self):
        quietly(check_silent, FakeGuest(silent_script()))

    def test_a_tone_left_at_3_percent_fails(self):
        with self.assertRaisesRegex(Failure, "still there with silent mode on"):
            quietly(check_silent, FakeGuest(silent_script(silenced=0.03)))

    def test_a_tone_that_does_not_come_back_fails(self):
        with self.assertRaisesRegex(Failure, "did not come back"):
            quietly(check_silent, FakeGuest(silent_script(back=0.5)))


def call_script(held=0.0, held_after=0.5, resumed=1.0):
    """Music, then the call for 3.5 s: what the music's device held plays for `held_after` s at
    full level, then the music at `held`; 1.5 s after the call, the music at `resumed`."""
    call = tone(CALL_HZ, 3.5, LEVEL)
    under = music(held_after) + music(3.5 - held_after, held)
    return [(stereo(music(1.5)), "call-before"), (stereo(music(1.5)), "call-start"),
            (stereo(mix(call[:72000], under[:72000])), "call-during alive"),
            (stereo(mix(call[72000:], under[72000:]) + silence(72000)), "call-after 0 |"),
            (stereo(music(1.5, resumed)), "call-end alive")]


class Call(unittest.TestCase):
    def test_the_music_interrupted_by_the_call_and_resumed(self):
        _, printed = quietly(check_call, FakeGuest(call_script()))
        self.assertIn("ms after the first 0.5 s)", printed)

    def test_what_the_device_held_may_play_for_0_5_s_not_more(self):
        quietly(check_call, FakeGuest(call_script(held_after=0.45)))
        with self.assertRaisesRegex(Failure, "not interrupted"):
            quietly(check_call, FakeGuest(call_script(held_after=0.8)))

    def test_music_at_a_fifth_under_the_call_fails(self):
        with self.assertRaisesRegex(Failure, "not interrupted"):
            quietly(check_call, FakeGuest(call_script(held=0.2)))

    def test_music_not_resumed_fails(self):
        with self.assertRaisesRegex(Failure, "no end of interruption with shouldResume"):
            quietly(check_call, FakeGuest(call_script(resumed=0.0)))


def lost_script(held=0.0, released=1.0, right=False, said="music-said=1 call-said=1"):
    """The tower lost: music, held by a call; the daemon killed; the music `released` after. With
    `right`, the music plays on the right channel only (the card left on the UCM phase's Earpiece)."""
    def out(samples):
        return stereo(silence(len(samples)), samples) if right else stereo(samples)
    call = tone(CALL_HZ, 3.5, LEVEL)
    return [(out(music(1.5)), "lost-before"), (out(music(1.5)), "lost-call"),
            (out(mix(call[:120000], music(2.5, held))), "lost-held alive"),
            (out(mix(call[120000:], music(1.0, released)) + music(1.0, released)), "lost-after 0"),
            (out(music(1.5, released)), f"lost-end alive {said}")]


class TowerLost(unittest.TestCase):
    def test_released_when_the_daemon_dies(self):
        quietly(check_tower_lost, FakeGuest(lost_script()))
        quietly(check_tower_lost, FakeGuest(lost_script(right=True)))

    def test_still_held_after_the_kill_fails(self):
        with self.assertRaisesRegex(Failure, "still held"):
            quietly(check_tower_lost, FakeGuest(lost_script(released=0.1)))

    def test_not_held_by_the_call_fails(self):
        with self.assertRaisesRegex(Failure, "did not hold the music"):
            quietly(check_tower_lost, FakeGuest(lost_script(held=0.5)))

    def test_each_stream_says_once_that_the_tower_went_away(self):
        with self.assertRaisesRegex(Failure, "should say once"):
            quietly(check_tower_lost, FakeGuest(lost_script(said="music-said=2 call-said=1")))


class Guest(unittest.TestCase):
    def test_a_guest_that_fails_first_fails_with_its_words(self):
        guest = FakeGuest([(b"", "duck-before"), (b"", "fail audioroute silent on failed: no bus")])
        with self.assertRaisesRegex(Failure, "the guest: audioroute silent on failed: no bus"):
            quietly(check_duck, guest)


class RecordedReports(unittest.TestCase):
    """The synthesized files with the reports as a run said them."""
    lines = recorded("tower-phase.console")

    def with_recorded(self, script, lines=None):
        """The script's card data before each report, the recorded report with the same words."""
        lines = self.lines if lines is None else lines
        said = {line.split()[0]: line for line in lines}
        return [(data, said[line.split()[0]]) for data, line in script]

    def test_every_report_reads_into_its_event(self):
        for event in tower.EVENTS:
            with self.subTest(event.__name__):
                self.assertIsNotNone(event.find(self.lines))
        # "duck-after 0" (the prompt's aplay said nothing); "lost-end alive music-said=1 call-said=1".
        self.assertEqual(tower.DuckAfter.find(self.lines).exited, "0")
        end = tower.LostEnd.find(self.lines)
        self.assertEqual((end.alive, end.said), (True, {"music-said": "1", "call-said": "1"}))

    def test_the_checks_pass_on_the_recorded_reports(self):
        for check, script in ((check_duck, duck_script()), (check_silent, silent_script()), (check_call, call_script()),
                              (check_tower_lost, lost_script())):
            with self.subTest(check.__name__):
                quietly(check, FakeGuest(self.with_recorded(script)))

    def test_a_recorded_report_changed_to_a_fault_fails(self):
        cases = [(check_duck, duck_script(), "duck-after 0", "duck-after 1 aplay: error", "the prompt was not heard for 1 s"),
                 (check_silent, silent_script(), "silent-on-end alive", "silent-on-end exited", "aplay should run on"),
                 (check_call, call_script(), "call-during alive", "call-during exited", "should be held during the call"),
                 (check_tower_lost, lost_script(), "lost-end alive music-said=1", "lost-end alive music-said=0", "should say once")]
        for check, script, old, new, message in cases:
            lines = [line.replace(old, new) for line in self.lines]
            self.assertNotEqual(lines, self.lines)
            with self.subTest(check.__name__), self.assertRaisesRegex(Failure, message):
                quietly(check, FakeGuest(self.with_recorded(script, lines)))


if __name__ == "__main__":
    unittest.main()
