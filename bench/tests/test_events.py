"""Typed guest events (realkernel.events): each phase's events' words (the kernel bench's, the
Bluetooth bench's and the sound-server bench's) are said by its guest script, a report reads into its value, and the jack phase's
check on a recorded phase (fixtures/jack-phase.console) and on reports changed to a fault."""
import re
import unittest

from fake_guest import FakeGuest, quietly, recorded
from realkernel import capture, cycles, hardware, jack, multiroute, surround, sync, tower, ucm
from realkernel.bluetooth import image as bluetooth_image, pairing as bluetooth_pairing, pipewire as bluetooth_pipewire
from realkernel.server import phases as server_phases
from realkernel.common import Failure
from realkernel.events import Event
from realkernel.harness import guest_text

# The phases with typed events.
KERNEL_PHASES = (capture, cycles, hardware, jack, multiroute, surround, sync, tower, ucm)
BLUETOOTH_PHASES = (bluetooth_pairing, *bluetooth_image.PHASES, bluetooth_pipewire)
SERVER_PHASES = (server_phases,)
PHASES = KERNEL_PHASES + BLUETOOTH_PHASES + SERVER_PHASES
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
        # Every event is in its phase's EVENTS, and every phase's are the events there are.
        phases = [cls for module in PHASES for cls in module.EVENTS]
        self.assertEqual(len(phases), len(set(phases)), "an event declared twice")
        self.assertEqual(sorted(cls.__name__ for cls in classes), sorted(cls.__name__ for cls in phases))
        # Within a bench, words name one event (the two benches each have a call-start and share stuck).
        for bench in (KERNEL_PHASES, BLUETOOTH_PHASES, SERVER_PHASES):
            words = [cls.words for module in bench for cls in module.EVENTS]
            self.assertEqual(len(set(words)), len(words), "two events of one bench with the same words")
        for cls in classes:
            with self.subTest(cls.__name__):
                # A report whose words a shell function builds (ucm.sh's `step`) says how it says them;
                # one is said by guest-stamp (the moment a program starts: stamp.c).
                said = getattr(cls, "said", cls.words)
                self.assertRegex(guest_text(cls.script), rf"\b(say|guest-stamp) {re.escape(said)}(?![\w-])")

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
