"""Typed guest events: a report the guest says on its console (`say WORDS FIELDS...` in one of
bench/guest/'s scripts) read into a value by its class, instead of a string each check splits.
A phase declares its events beside its check (jack.py is the first); bench/tests checks that the
guest's script says each event's words."""
import json
from typing import ClassVar

from .common import Failure


class Event:
    """A report's words, the script that says them, and how its fields become the event."""
    words: ClassVar[str]
    script: ClassVar[str]

    @classmethod
    def parse(cls, line):
        raise NotImplementedError

    @classmethod
    def wait(cls, guest, seconds):
        """The guest's first report of this event, waiting up to `seconds` (Guest.wait_for)."""
        return cls.parse(guest.wait_for(cls.words, seconds))


def ports_field(line, words):
    """The `audioroute ports --json` a report carries after its words, or a Failure naming it."""
    text = line[len(words):].strip()
    try:
        return json.loads(text)
    except ValueError:
        raise Failure(f"'{words}': `audioroute ports --json` printed no JSON: {text[:300]}")
