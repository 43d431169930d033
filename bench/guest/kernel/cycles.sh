# The kernel bench's cycles phase, its guest part (its checks: bench/realkernel/cycles.py); sourced by
# kernel-checks.sh, after the phases before it.
# The cycles. Each: a fresh `audioroute play` on the HDA card; the host hot-adds the USB card
# (QMP device_add) when the guest says ready, and removes it when the guest says added. The
# player plays the plugin cycles' signal, so that the host places its frames on each card.
n=1
while [ $n -le $CYCLES ]; do
  # AUDIOROUTE_DEBUG: the player's mover (the plugin's, in its process) traces the move, timed,
  # on standard error, to split the gap as the plugin's is.
  AUDIOROUTE_DEBUG=1 audioroute play /root/signal.wav > /run/play-$n.log 2> /run/play-trace-$n.log &
  PLAYER=$!
  wait_until 100 grep -q playing /run/play-$n.log || fail "cycle $n: audioroute play did not start"
  sleep 1
  say ready $n
  wait_until 600 initialized card1 || fail "cycle $n: no SOUND_INITIALIZED card1 within 60 s of ready"
  wait_until 300 count_at_least $n newDeviceAvailable /run/monitor.log || fail "cycle $n: no newDeviceAvailable within 30 s"
  wait_until 300 grep -q "USB Audio  playing" /run/play-$n.log || fail "cycle $n: the player did not say it plays on the USB card"
  sleep 1.5
  flush_hda
  say added $n $(audioroute ports --json 2>&1 | tr -d '\n')
  wait_until 600 gone card1 || fail "cycle $n: card1 still there 60 s after added"
  wait_until 300 count_at_least $n oldDeviceUnavailable /run/monitor.log || fail "cycle $n: no oldDeviceUnavailable within 30 s"
  sleep 1.5
  say removed $n $(audioroute ports --json 2>&1 | tr -d '\n')
  if kill -0 $PLAYER 2>/dev/null; then say player $n running $(tail -1 /run/play-$n.log); kill -TERM $PLAYER; wait $PLAYER
  else wait $PLAYER; say player $n exited $? $(tail -3 /run/play-$n.log | tr '\n' '|') $(grep -v '^audioroute [0-9]' /run/play-trace-$n.log | tail -3 | tr '\n' '|'); fi
  grep '^audioroute [0-9]' /run/play-trace-$n.log | while read -r line; do say player-trace $n "$line"; done
  say player-trace-end $n
  PLAYER=
  n=$((n + 1))
done
# The first daemon after the cycles (as at its start): no card has a profile in the system's tree,
# so no helper runs.
say daemon-memory $(memory)
