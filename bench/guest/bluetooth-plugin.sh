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
