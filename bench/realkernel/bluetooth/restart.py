"""bluetoothd restarted: the headset's ports go, and come back once it is connected again; the
daemon lives on."""
from dataclasses import dataclass
from typing import ClassVar

from ..common import Failure
from .cycles import HfpRetry
from .logs import Alive, Marker, Ports, Report, check_ports, headset_ports

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-restart.sh"


@dataclass(frozen=True)
class BtdStopped(Marker):
    """`btd-stopped PORTS`: bluetoothd killed, and the headset's ports gone."""
    words: ClassVar[str] = "btd-stopped"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class Stuck(Report):
    """`stuck NAME WCHAN SYSCALL SIGBLK`: an app that outlived its SIGTERM by 5 s, killed (boot.sh's stop)."""
    words: ClassVar[str] = "stuck"
    script: ClassVar[str] = "boot.sh"
    said: str

    @classmethod
    def parse(cls, line):
        return cls(line[len(cls.words):].strip())


@dataclass(frozen=True)
class BtdBack(Ports):
    """`btd-back PORTS`: bluetoothd restarted, the headset found and connected again."""
    words: ClassVar[str] = "btd-back"
    script: ClassVar[str] = SCRIPT


@dataclass(frozen=True)
class DaemonAfter(Alive):
    """`daemon-after alive|dead`: whether audiorouted answers `audioroute status`."""
    words: ClassVar[str] = "daemon-after"
    script: ClassVar[str] = SCRIPT


EVENTS = (BtdStopped, Stuck, BtdBack, DaemonAfter)


def check_restart(guest, headset, computer):
    """The headset's ports back after the restart, and the daemon answering."""
    BtdStopped.wait(guest, 60)
    for stuck in Stuck.every(guest.lines()):
        print(f"    note: a player outlived its SIGTERM and was killed: {stuck.said}")
    line = guest.wait_for(BtdBack.words, 180)
    HfpRetry.print_for(guest.lines(), "restart")
    back = BtdBack.parse(line)
    check_ports(headset_ports(back.ports, back.words, headset, computer), back.words, headset)
    if not DaemonAfter.wait(guest, 30).alive:
        raise Failure("audiorouted did not answer after bluetoothd restarted")
