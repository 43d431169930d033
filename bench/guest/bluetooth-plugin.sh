# The Bluetooth bench's plugin phase: sourced by bluetooth-checks.sh, checked by bench/realkernel/bluetooth/plugin.py.
# Music through the ALSA plugin: plain aplay follows the route to the headset.
connect plugin || fail "plugin: Connect failed twice: $(cat /run/connect.log)"
wait_until 30 route_is "bt:$H:a2dp" || fail "plugin: the route is not the headset's A2DP"
sleep 1
say plugin-start
AUDIOROUTE_DEBUG=1 aplay -q -D audioroute /root/music.wav > /run/aplay-bt.log 2>&1 &
MUSIC=$!
sleep 4
say plugin-playing $(alive $MUSIC)
stop $MUSIC plugin-aplay; MUSIC=
sleep 1
# BlueALSA's volume of the headset's A2DP as the session reads it (`audioroute hardware`), against
# its control plugin's element as amixer shows it (lines joined by `|`; the host computes alsamixer's
# value), then set by amixer to the middle of its raw range and read again; put back after.
BT_CTL=bluealsa:DEV=$H,BAT=no
bt_volume() {
  echo "A2DP|$(amixer -D $BT_CTL sget A2DP 2>&1 | tr '\n' '|')$( (amixer -D $BT_CTL cget name='A2DP Playback Volume' || amixer -D $BT_CTL cget name='A2DP Volume') 2>&1 | tr '\n' '|')"
}
say plugin-volume-mixer "$(bt_volume)"
say plugin-volume $(audioroute hardware --json 2>/run/hardware-bt.log | tr -d '\n')
# The first channel's raw value (`Front Left: Playback 127 [100%]`; not the `Limits:` line).
BT_RAW=$(amixer -D $BT_CTL sget A2DP | sed -n 's/^ *[A-Za-z ]*: Playback \([0-9][0-9]*\) \[.*/\1/p' | head -1)
amixer -q -D $BT_CTL sset A2DP 50% || fail "plugin: amixer -D $BT_CTL sset A2DP 50% failed"
sleep 0.5
say plugin-volume-mixer-set "$(bt_volume)"
say plugin-volume-set $(audioroute hardware --json 2>/run/hardware-bt.log | tr -d '\n')
amixer -q -D $BT_CTL sset A2DP ${BT_RAW:-127} || fail "plugin: amixer could not put A2DP back to ${BT_RAW:-127}"
say plugin-volume-restored "$(bt_volume)"
