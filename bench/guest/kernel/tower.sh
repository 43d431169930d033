# The kernel bench's tower phase, its guest part (its checks: bench/realkernel/tower.py); sourced by
# kernel-checks.sh, after the phases before it.
# The tower's decisions on plain aplay streams (the plugin's sessions), all on the HDA card; the
# host reads each tone's level between the reports, in the HDA card's file.
if [ -n "$TOWER" ]; then
  # Ducking: music (500 Hz) and a duckOthers prompt (1250 Hz, 3.5 s) at once.
  aplay -q -D audioroute /root/music.wav > /run/aplay-duck-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say duck-before; sleep 1.5
  say duck-prompt
  aplay -q -D 'audioroute:CATEGORY=playback,OPTIONS=mixWithOthers+duckOthers' /root/prompt.wav > /run/aplay-duck-prompt.log 2>&1 &
  OTHER=$!
  wait $OTHER; status=$?; OTHER=
  sleep 1; say duck-after $status $(tail -2 /run/aplay-duck-prompt.log | tr '\n' '|'); sleep 1.5
  say duck-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
  # Silent mode: a soloAmbient stream (700 Hz) is silenced while aplay keeps running.
  aplay -q -D audioroute:CATEGORY=soloAmbient /root/ambient.wav > /run/aplay-silent.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say silent-before; sleep 1.5
  say silent-switch
  audioroute silent on > /run/silent.log 2>&1 || fail "audioroute silent on failed: $(cat /run/silent.log)"
  sleep 0.7; say silent-on; sleep 1.5
  say silent-on-end $(alive $MUSIC)
  audioroute silent off > /run/silent.log 2>&1 || fail "audioroute silent off failed: $(cat /run/silent.log)"
  sleep 0.7; say silent-off; sleep 1.5
  say silent-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
  # A call: music (500 Hz) is interrupted by a playAndRecord stream (900 Hz, 3.5 s), and resumes
  # when the call's aplay closes (its session deactivates with notifyOthers).
  aplay -q -D audioroute /root/music.wav > /run/aplay-call-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say call-before; sleep 1.5
  say call-start
  aplay -q -D audioroute:CATEGORY=playAndRecord /root/call.wav > /run/aplay-call.log 2>&1 &
  OTHER=$!
  sleep 1.5; say call-during $(alive $MUSIC)
  wait $OTHER; status=$?; OTHER=
  sleep 1.5; say call-after $status $(tail -2 /run/aplay-call.log | tr '\n' '|'); sleep 1.5
  say call-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
fi
