# The kernel bench's sync phase, its guest part (its checks: bench/realkernel/sync.py); sourced by
# kernel-checks.sh, after the phases before it.
# Two `audioroute play --at T` (AudioPlayer.play(atTime:)), started one after the other for the same
# T on CLOCK_MONOTONIC (/proc/uptime's clock: the guest never sleeps), on the route's HDA device:
# one plays a tone on the left only, the other on the right only (mixWithOthers: neither interrupts
# the other). The host reads where each tone starts in the HDA card's file.
if [ -n "$SYNC" ]; then
  say sync-ready
  # The host starts keeping the card's file on sync-ready.
  sleep 1
  read up rest < /proc/uptime
  at=$(( ${up%.*} + 3 ))
  audioroute play --options mixWithOthers --at $at /root/sync-left.wav > /run/play-sync-left.log 2>&1 &
  LEFT=$!
  sleep 0.3
  audioroute play --options mixWithOthers --at $at /root/sync-right.wav > /run/play-sync-right.log 2>&1 &
  RIGHT=$!
  wait $LEFT
  left=$?
  wait $RIGHT
  right=$?
  flush_hda
  sleep 1
  say sync-done $at $left $right "$(tail -c 300 /run/play-sync-left.log | tr '\r\n' '||')" "$(tail -c 300 /run/play-sync-right.log | tr '\r\n' '||')"
fi
