# The Bluetooth bench's init, last: its phases, each a file of bench/guest/ that the image packs
# in @BT_PHASES@ (bluetooth/image.py) and this shell sources in turn, so that they share its
# variables and functions. The host reads the speaker (the HDA card's WAV file) between the reports.
# AR_BUS: the daemon the checks ask (--system in the system instance's phase).
AR_BUS=
headset_ports() { audioroute ports $AR_BUS --json 2>/dev/null | grep -o '"uid": "bt:'"$H" | wc -l; }
no_headset_ports() { [ "$(headset_ports)" = 0 ]; }
# Each check starts `audioroute` (about half a second in this guest): counts of 30 wait 20 s and more.
route_is() { audioroute status $AR_BUS 2>/dev/null | grep -q "outputs: $1 "; }
# Waits for the headset's two ports; connects HFP's HF profile once more if it is not up.
hfp_up() {
  wait_until 20 eval '[ "$(headset_ports)" -ge 2 ]' && return 0
  call $CDEV org.bluez.Device1.ConnectProfile string:0000111e-0000-1000-8000-00805f9b34fb > /run/hfp-retry.log 2>&1
  say hfp-retry $1 $? $(tr '\n' ' ' < /run/hfp-retry.log | cut -c1-160)
  wait_until 30 eval '[ "$(headset_ports)" -ge 2 ]'
}
connect() {
  # Connect, once more if the first fails (reported: the host counts them).
  call $CDEV org.bluez.Device1.Connect > /run/connect.log 2>&1 && return 0
  say connect-retry $1 $(tr '\n' ' ' < /run/connect.log | cut -c1-160)
  sleep 2
  call $CDEV org.bluez.Device1.Connect > /run/connect.log 2>&1
}
# Disconnects the headset from the computer's side and waits for its link to go.
disconnect_headset() {
  call $CDEV org.bluez.Device1.Disconnect > /run/disconnect.log 2>&1 || fail "$1: Disconnect failed: $(cat /run/disconnect.log)"
  wait_until 150 is $CDEV org.bluez.Device1 Connected false || fail "$1: the headset's link is still up 15 s after Disconnect"
}
. @BT_PHASES@/bluetooth-cycles.sh
. @BT_PHASES@/bluetooth-floor.sh
. @BT_PHASES@/bluetooth-plugin.sh
. @BT_PHASES@/bluetooth-calls.sh
. @BT_PHASES@/bluetooth-restart.sh
. @BT_PHASES@/bluetooth-system.sh
finish
