# The kernel bench's plugin phase, its guest part (its checks: bench/realkernel/cycles.py); sourced by
# kernel-checks.sh, after the phases before it.
# The plugin's cycles: a plain `aplay -D audioroute` (the ALSA plugin) of a signal the host can
# place frame by frame, started on the HDA card; the host hot-adds, then removes, the USB card.
# The same aplay runs through the whole cycle: it is never restarted.
if [ -n "$PLUGIN" ]; then
  m=1
  while [ $m -le $CYCLES ]; do
    k=$((CYCLES + m))
    # AUDIOROUTE_DEBUG: the plugin's trace of the move, timed, to split the gap.
    AUDIOROUTE_DEBUG=1 aplay -q -D audioroute /root/signal.wav > /run/aplay-follow-$m.log 2>&1 &
    PLAYER=$!
    sleep 1.5
    kill -0 $PLAYER 2>/dev/null || fail "plugin cycle $m: aplay -D audioroute exited at once: $(tr '\n' '|' < /run/aplay-follow-$m.log)"
    say plugin-ready $m $PLAYER
    say plugin-sessions-ready $m $(audioroute status --json 2>&1 | tr -d '\n')
    wait_until 600 initialized card1 || fail "plugin cycle $m: no SOUND_INITIALIZED card1 within 60 s of plugin-ready"
    wait_until 300 count_at_least $k newDeviceAvailable /run/monitor.log || fail "plugin cycle $m: no newDeviceAvailable within 30 s"
    sleep 2
    flush_hda
    say plugin-added $m $(alive $PLAYER)
    say plugin-sessions-added $m $(audioroute status --json 2>&1 | tr -d '\n')
    wait_until 600 gone card1 || fail "plugin cycle $m: card1 still there 60 s after plugin-added"
    wait_until 300 count_at_least $k oldDeviceUnavailable /run/monitor.log || fail "plugin cycle $m: no oldDeviceUnavailable within 30 s"
    sleep 2
    say plugin-removed $m $(alive $PLAYER)
    say plugin-sessions-removed $m $(audioroute status --json 2>&1 | tr -d '\n')
    if [ $m -eq $CYCLES ]; then
      # The card comes back under the held aplay: it goes on there by itself (an unplug's hold
      # lifts when the route names the device it was held from again), its session active again.
      say plugin-replug-ready $m
      wait_until 600 initialized card1 || fail "plugin re-plug: no SOUND_INITIALIZED card1 within 60 s of plugin-replug-ready"
      wait_until 300 count_at_least $((k + 1)) newDeviceAvailable /run/monitor.log || fail "plugin re-plug: no newDeviceAvailable within 30 s"
      sleep 2
      say plugin-replugged $m $(alive $PLAYER)
      say plugin-sessions-replugged $m $(audioroute status --json 2>&1 | tr -d '\n')
      wait_until 600 gone card1 || fail "plugin re-plug: card1 still there 60 s after plugin-replugged"
      wait_until 300 count_at_least $((k + 1)) oldDeviceUnavailable /run/monitor.log || fail "plugin re-plug: no oldDeviceUnavailable within 30 s"
      sleep 1
      say plugin-replug-removed $m $(alive $PLAYER)
    fi
    stop $PLAYER "plugin-cycle-$m"
    while read -r line; do say plugin-trace $m "$line"; done < /run/aplay-follow-$m.log
    say plugin-trace-end $m
    PLAYER=
    m=$((m + 1))
  done
fi
