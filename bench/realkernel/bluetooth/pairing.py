"""The pairing phase: the computer (hci0) discovers and pairs the headset (hci1), with BlueZ
5.66's AVDTP quirk worked around (bluetooth-pair.sh)."""
from dataclasses import dataclass
from typing import ClassVar

from .logs import Marker, Report, Said, fields

# The phase's part in the guest's init (bench/guest/).
SCRIPT = "bluetooth-pair.sh"


@dataclass(frozen=True)
class Addresses(Report):
    """`addresses computer C headset H`: the two controllers' addresses, once bluetoothd exports them."""
    words: ClassVar[str] = "addresses"
    script: ClassVar[str] = "bluetooth.sh"
    computer: str
    headset: str

    @classmethod
    def parse(cls, line):
        said = fields(line, 4, cls.words)
        return cls(said[1], said[3])


@dataclass(frozen=True)
class Paired(Marker):
    """`paired UPTIME`: both sides know and trust each other."""
    words: ClassVar[str] = "paired"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class Quirk(Said):
    """`quirk STATUS attempt N OUTPUT`: the headset's side's ConnectProfile(A2DP Source), the
    quirk's workaround (it fails; printed as said)."""
    words: ClassVar[str] = "quirk"
    script: ClassVar[str] = SCRIPT


EVENTS = (Addresses, Paired, Quirk)


def check_pairing(guest):
    """The two addresses, the pairing, and the quirk's attempt (printed); returns (headset, computer)."""
    addresses = Addresses.wait(guest, 120)
    Paired.wait(guest, 240)
    print("    " + Quirk.wait(guest, 60).line[:200])
    return addresses.headset, addresses.computer
