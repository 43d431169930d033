# The sound-server bench's tower phase, its guest part (its checks: bench/realkernel/server/phases.py,
# with the kernel bench's own checks of the tower): the server's own clients (pw-play, or paplay on
# PulseAudio, with a media.role; no AudioRoute library, no plugin) as sessions in audiorouted's
# tower, on the HDA card's sink; the host reads each tone's level between the reports, in the HDA
# card's file.
# PulseAudio's own role policy (Debian's default.pa loads module-role-cork: a phone stream corks
# the others) is what AudioRoute's tower replaces: unloaded, as docs/alsa.md tells integrators,
# so that what is heard is AudioRoute's doing.
[ $SERVER = pulseaudio ] && { timeout 10 pactl unload-module module-role-cork || fail "tower: cannot unload module-role-cork"; }
# Ducking: music (500 Hz, Music) and a Navigation prompt (1250 Hz, 3.5 s) at once.
play /root/music.wav Music /run/server-duck-music.log; MUSIC=$PLAYED
sleep 1.5; say duck-before; sleep 1.5
say duck-prompt
play /root/prompt.wav Navigation /run/server-duck-prompt.log; OTHER=$PLAYED
wait $OTHER; status=$?; OTHER=
sleep 1; say duck-after $status $(tail -2 /run/server-duck-prompt.log | tr '\n' '|'); sleep 1.5
say duck-end $(alive $MUSIC)
stop $MUSIC $PLAYER_NAME; MUSIC=
# Silent mode: a Notification stream (700 Hz, ambient) is silenced while it keeps playing.
play /root/ambient.wav Notification /run/server-silent.log; MUSIC=$PLAYED
sleep 1.5; say silent-before; sleep 1.5
say silent-switch
audioroute silent on > /run/silent.log 2>&1 || fail "audioroute silent on failed: $(cat /run/silent.log)"
sleep 0.7; say silent-on; sleep 1.5
say silent-on-end $(alive $MUSIC)
audioroute silent off > /run/silent.log 2>&1 || fail "audioroute silent off failed: $(cat /run/silent.log)"
sleep 0.7; say silent-off; sleep 1.5
say silent-end $(alive $MUSIC)
stop $MUSIC $PLAYER_NAME; MUSIC=
# A call: music (500 Hz) is paused (muted on PulseAudio) by a Phone stream (900 Hz, 3.5 s:
# playAndRecord, voiceChat), and plays again when the call's stream ends.
play /root/music.wav Music /run/server-call-music.log; MUSIC=$PLAYED
sleep 1.5; say call-before; sleep 1.5
say call-start
play /root/call.wav Phone /run/server-call.log; OTHER=$PLAYED
sleep 1.5; say call-during $(alive $MUSIC)
wait $OTHER; status=$?; OTHER=
sleep 1.5; say call-after $status $(tail -2 /run/server-call.log | tr '\n' '|'); sleep 1.5
say call-end $(alive $MUSIC)
say tower-sessions "$(audioroute status 2>&1 | grep -A4 '^Sessions' | tr '\n' '|')"
stop $MUSIC $PLAYER_NAME; MUSIC=
[ $SERVER = pulseaudio ] && timeout 10 pactl load-module module-role-cork > /dev/null
true
