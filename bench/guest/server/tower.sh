# The sound-server bench's tower phase, its guest part (its checks: bench/realkernel/server/phases.py,
# with the kernel bench's own checks of the tower): PipeWire's own clients (pw-play with a
# media.role, no AudioRoute library, no plugin) as sessions in audiorouted's tower, on the HDA
# card's sink; the host reads each tone's level between the reports, in the HDA card's file.
# Ducking: music (500 Hz, Music) and a Navigation prompt (1250 Hz, 3.5 s) at once.
pw-play --media-role Music /root/music.wav > /run/server-duck-music.log 2>&1 &
MUSIC=$!
sleep 1.5; say duck-before; sleep 1.5
say duck-prompt
pw-play --media-role Navigation /root/prompt.wav > /run/server-duck-prompt.log 2>&1 &
OTHER=$!
wait $OTHER; status=$?; OTHER=
sleep 1; say duck-after $status $(tail -2 /run/server-duck-prompt.log | tr '\n' '|'); sleep 1.5
say duck-end $(alive $MUSIC)
stop $MUSIC pw-play; MUSIC=
# Silent mode: a Notification stream (700 Hz, ambient) is silenced while it keeps playing.
pw-play --media-role Notification /root/ambient.wav > /run/server-silent.log 2>&1 &
MUSIC=$!
sleep 1.5; say silent-before; sleep 1.5
say silent-switch
audioroute silent on > /run/silent.log 2>&1 || fail "audioroute silent on failed: $(cat /run/silent.log)"
sleep 0.7; say silent-on; sleep 1.5
say silent-on-end $(alive $MUSIC)
audioroute silent off > /run/silent.log 2>&1 || fail "audioroute silent off failed: $(cat /run/silent.log)"
sleep 0.7; say silent-off; sleep 1.5
say silent-end $(alive $MUSIC)
stop $MUSIC pw-play; MUSIC=
# A call: music (500 Hz) is paused by a Phone stream (900 Hz, 3.5 s: playAndRecord, voiceChat),
# and plays again when the call's stream ends.
pw-play --media-role Music /root/music.wav > /run/server-call-music.log 2>&1 &
MUSIC=$!
sleep 1.5; say call-before; sleep 1.5
say call-start
pw-play --media-role Phone /root/call.wav > /run/server-call.log 2>&1 &
OTHER=$!
sleep 1.5; say call-during $(alive $MUSIC)
wait $OTHER; status=$?; OTHER=
sleep 1.5; say call-after $status $(tail -2 /run/server-call.log | tr '\n' '|'); sleep 1.5
say call-end $(alive $MUSIC)
say tower-sessions "$(audioroute status 2>&1 | grep -A4 '^Sessions' | tr '\n' '|')"
stop $MUSIC pw-play; MUSIC=
