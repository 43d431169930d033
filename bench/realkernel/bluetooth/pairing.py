"""The pairing phase: the computer (hci0) discovers and pairs the headset (hci1), with BlueZ
5.66's AVDTP quirk worked around (bluetooth-pair.sh)."""

# The phase's part in the guest's init (bench/guest/).
SCRIPT = "bluetooth-pair.sh"


def check_pairing(guest):
    """The two addresses, the pairing, and the quirk's attempt (printed); returns (headset, computer)."""
    line = guest.wait_for("addresses", 120)
    headset, computer = line.split()[4], line.split()[2]
    guest.wait_for("paired", 240)
    print("    " + guest.wait_for("quirk", 60)[:200])
    return headset, computer
