# The kernel bench's lost phase, its guest part (its checks: bench/realkernel/tower.py); sourced by
# kernel-checks.sh, after the phases before it.
# The tower lost while it holds a stream: music (500 Hz) held by a call (900 Hz, 3.5 s), then the
# daemon killed (SIGKILL). Both plugin streams are released and play on outside the tower, each
# saying so once; the music is heard again once the call's aplay ends. Last: no daemon after it.
if [ -n "$TOWER" ]; then
  aplay -q -D audioroute /root/music.wav > /run/aplay-lost-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say lost-before; sleep 1.5
  say lost-call
  aplay -q -D audioroute:CATEGORY=playAndRecord /root/call.wav > /run/aplay-lost-call.log 2>&1 &
  OTHER=$!
  sleep 2.5; say lost-held $(alive $MUSIC)
  kill -KILL $DAEMON; wait $DAEMON 2>/dev/null; DAEMON=
  wait $OTHER; status=$?; OTHER=
  sleep 1; say lost-after $status; sleep 1.5
  say lost-end $(alive $MUSIC) music-said=$(grep -c "went away" /run/aplay-lost-music.log) call-said=$(grep -c "went away" /run/aplay-lost-call.log)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
fi
