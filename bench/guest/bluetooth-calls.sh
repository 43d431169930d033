# The Bluetooth bench's calls phase: sourced by bluetooth-checks.sh, checked by bench/realkernel/bluetooth/calls.py.
# A call: music plays to the headset's A2DP; a playAndRecord + voiceChat session takes the route
# to HFP; when it ends, the music comes back on A2DP.
audioroute play /root/tone.wav > /run/play-music.log 2>&1 &
PLAYER=$!
wait_until 100 grep -q "BlueZ 5.66  playing" /run/play-music.log || fail "call: the music did not play on the headset: $(tail -2 /run/play-music.log)"
sleep 1.5
say call-start
audioroute play --category playAndRecord --mode voiceChat /root/call.wav > /run/play-call.log 2>&1 &
OTHER=$!
sleep 1.5
say call-during $(audioroute status --json 2>&1 | tr -d '\n')
wait $OTHER; status=$?; OTHER=
say call-ended $status $(tail -2 /run/play-call.log | tr '\n' '|')
wait_until 30 route_is "bt:$H:a2dp" || fail "call: the route did not come back to the headset's A2DP: $(audioroute status --json | tr -d '\n')"
sleep 3
say call-after $(tail -1 /run/play-music.log) $(audioroute status --json 2>&1 | tr -d '\n')
kill -TERM $PLAYER 2>/dev/null; wait $PLAYER; PLAYER=
# The same call through the plugin: plain aplay as the call's app.
AUDIOROUTE_DEBUG=1 aplay -q -D audioroute /root/music.wav > /run/aplay-call-music.log 2>&1 &
MUSIC=$!
sleep 2
say plugin-call-start
AUDIOROUTE_DEBUG=1 aplay -q -D audioroute:CATEGORY=playAndRecord,MODE=voiceChat /root/call.wav > /run/aplay-call.log 2>&1 &
OTHER=$!
sleep 1.5
say plugin-call-during $(alive $MUSIC) $(audioroute status --json 2>&1 | tr -d '\n')
wait $OTHER; status=$?; OTHER=
say plugin-call-ended $status
sleep 3
say plugin-call-after $(alive $MUSIC) $(audioroute status --json 2>&1 | tr -d '\n')
stop $MUSIC aplay-music; MUSIC=
