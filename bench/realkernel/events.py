"""Typed guest events: a report the guest says on its console (`say WORDS FIELDS...` in one of
bench/guest/'s scripts) read into a value by its class, instead of a string each check splits.
A phase declares its events beside its check, as its module's EVENTS; bench/tests checks that the
guest's script says each event's words."""
import json
from dataclasses import dataclass, field
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
    def wait(cls, guest, seconds, *key):
        """The guest's first report of this event, waiting up to `seconds` (Guest.wait_for); `key`, the
        fields that tell one report of the words from another (a cycle's number), when they do."""
        return cls.parse(guest.wait_for(" ".join([cls.words, *map(str, key)]), seconds))

    @classmethod
    def find(cls, lines, *key):
        """This event's first report in a run's reports (Guest.lines()), or None; `key` as for wait."""
        words = " ".join([cls.words, *map(str, key)])
        line = next((l for l in lines if l == words or l.startswith(words + " ")), None)
        return None if line is None else cls.parse(line)


@dataclass(frozen=True)
class Report(Event):
    """An event that keeps the report as said, for the failure messages that quote it; its fields
    (after this one) are what the checks read."""
    report: str = field(compare=False)

    @classmethod
    def fields(cls, line):
        """The report's fields after its words, split at spaces."""
        return line[len(cls.words):].split()


@dataclass(frozen=True)
class Mark(Report):
    """A moment the guest says with nothing after it: the host reads the card's file between two."""

    @classmethod
    def parse(cls, line):
        return cls(line)


def ports_field(line, words):
    """The `audioroute ports --json` a report carries after its words, or a Failure naming it."""
    text = line[len(words):].strip()
    try:
        return json.loads(text)
    except ValueError:
        raise Failure(f"'{words}': `audioroute ports --json` printed no JSON: {text[:300]}")
