"""bluetoothd restarted: the headset's ports go, and come back once it is connected again; the
daemon lives on."""
from ..common import Failure
from .logs import check_ports, headset_ports

# The phase's part in the guest, which the image packs (bench/guest/).
SCRIPT = "bluetooth-restart.sh"


def check_restart(guest, headset, computer):
    """The headset's ports back after the restart, and the daemon answering."""
    guest.wait_for("btd-stopped", 60)
    for stuck in (l for l in guest.lines() if l.startswith("stuck ")):
        print(f"    note: a player outlived its SIGTERM and was killed: {stuck[len('stuck '):]}")
    words = "btd-back"
    line = guest.wait_for(words, 180)
    for retry in (l for l in guest.lines() if l.startswith("hfp-retry restart ")):
        print(f"    HFP was not up: ConnectProfile(HF) again, exit status {retry.split()[2]}")
    check_ports(headset_ports(line, words, headset, computer), words, headset)
    if "alive" not in guest.wait_for("daemon-after", 30):
        raise Failure("audiorouted did not answer after bluetoothd restarted")
