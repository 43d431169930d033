"""Typed guest events (realkernel.events; the jack phase's first, then the Bluetooth phases'): each
event's words are said by its guest script, a report reads into its value, and the jack phase's
check on a recorded phase (fixtures/jack-phase.console) and on reports changed to a fault."""
import re
import unittest

from fake_guest import FakeGuest, quietly, recorded
from realkernel import jack
from realkernel.bluetooth import image as bluetooth_image, pairing as bluetooth_pairing
from realkernel.common import Failure
from realkernel.events import Event
from realkernel.harness import guest_text

SPEAKER = "pci-0000:00:04.0/speaker"
HEADPHONES = "pci-0000:00:04.0/headphones"


def event_classes(base=Event):
    for cls in base.__subclasses__():
        if "words" in cls.__dict__:
            yield cls
        yield from event_classes(cls)


class Events(unittest.TestCase):
    def test_every_events_words_are_said_by_its_script(self):
        classes = list(event_classes())
        self.assertEqual(sorted(cls.words for cls in jack.EVENTS), ["jack-off", "jack-on"])
        # Each phase's events are among those found, each declared once, with words of its own.
        declared = [cls for phase in (jack, bluetooth_pairing, *bluetooth_image.PHASES) for cls in phase.EVENTS]
        self.assertEqual(len(declared), len(set(declared)))
        self.assertLessEqual(set(declared), set(classes))
        self.assertEqual(len({cls.words for cls in classes}), len(classes))
        for cls in classes:
            with self.subTest(cls.__name__):
                # Said by `say`, or by guest-stamp (the moment a program starts: stamp.c).
                self.assertRegex(guest_text(cls.script), rf"\b(say|guest-stamp) {re.escape(cls.words)}\b")

    def test_a_report_reads_into_its_event(self):
        on_line, off_line = recorded("jack-phase.console")
        on, off = jack.JackOn.parse(on_line), jack.JackOff.parse(off_line)
        # jack-on lists the speaker, the mic and the headphones, all available; jack-off the
        # headphones unavailable.
        self.assertEqual(on.outputs(), [HEADPHONES, SPEAKER])
        self.assertEqual(off.outputs(), [SPEAKER])
        self.assertEqual(len(off.ports), 3)

    def test_a_report_without_json_fails_by_name(self):
        with self.assertRaisesRegex(Failure, "'jack-on': `audioroute ports --json` printed no JSON: Error"):
            jack.JackOn.parse("jack-on Error: no daemon")


class JackPhase(unittest.TestCase):
    lines = recorded("jack-phase.console")

    def test_a_headphones_port_while_the_jack_is_on(self):
        uid, printed = quietly(jack.check_jack, FakeGuest([(b"", line) for line in self.lines]), [SPEAKER])
        self.assertEqual(uid, HEADPHONES)
        self.assertIn(f"outputs with the jack on: {[HEADPHONES, SPEAKER]}", printed)

    def test_a_headphones_port_left_available_fails(self):
        on, off = self.lines
        off = off.replace('"availability": "unavailable"', '"availability": "available"')  # the headphones' only
        self.assertNotEqual(off, self.lines[1])
        with self.assertRaisesRegex(Failure, "the outputs are .*, expected exactly"):
            quietly(jack.check_jack, FakeGuest([(b"", on), (b"", off)]), [SPEAKER])

    def test_a_headphones_port_gone_rather_than_unavailable_fails(self):
        on, off = self.lines
        off = re.sub(r', \{"uid": "pci-0000:00:04.0/headphones"[^}]*\}', "", off)
        with self.assertRaisesRegex(Failure, "is listed None, expected unavailable"):
            quietly(jack.check_jack, FakeGuest([(b"", on), (b"", off)]), [SPEAKER])

    def test_no_headphones_port_with_the_jack_on_fails(self):
        on, off = self.lines
        with self.assertRaisesRegex(Failure, "expected .* and one headphones port"):
            quietly(jack.check_jack, FakeGuest([(b"", off.replace("jack-off", "jack-on", 1)), (b"", off)]), [SPEAKER])


if __name__ == "__main__":
    unittest.main()
