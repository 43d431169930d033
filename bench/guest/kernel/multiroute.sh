# The kernel bench's multiRoute phase, its guest part (its checks: bench/realkernel/multiroute.py);
# sourced by kernel-checks.sh, after the phases before it.
# A multiRoute session plays to every eligible output: the HDA card's headphones (the jack
# phase's control, on) and the hot-added USB card, each its own device opened by the plugin. The
# music (a tone with markers, repeated MULTIROUTE times into one stream) reaches both cards' files,
# where the host measures their drift. The aplay runs with AUDIOROUTE_DEBUG: its log counts the
# plugin's corrections. Then a shorter stream during which the USB card is unplugged and plugged back.
if [ -n "$MULTIROUTE" ]; then
  MORE_LOGS="$MORE_LOGS /run/multiroute-*.log"
  # The monitor's lines so far, and at the end: the route changes between are the phase's.
  say multiroute-begin $(wc -l < /run/monitor.log)
  guest-jack 0 "Headphone Jack" on > /run/multiroute-jack.log 2>&1 \
    || { guest-jack 0 "Headphone Jack" add >> /run/multiroute-jack.log 2>&1 && guest-jack 0 "Headphone Jack" on >> /run/multiroute-jack.log 2>&1; } \
    || fail "multiRoute: could not switch a Headphone Jack control on: $(tr '\n' '|' < /run/multiroute-jack.log)"
  wait_until 30 has_headphones || fail "multiRoute: no headphones port 30 checks after the Headphone Jack control went on"
  NEW=$(grep -c newDeviceAvailable /run/monitor.log)
  say multiroute-ready
  wait_until 600 initialized card1 || fail "multiRoute: no SOUND_INITIALIZED card1 within 60 s of multiroute-ready"
  wait_until 300 count_at_least $((NEW + 1)) newDeviceAvailable /run/monitor.log || fail "multiRoute: no newDeviceAvailable within 30 s of the USB card"
  sleep 1
  i=0; while [ $i -lt $MULTIROUTE ]; do cat /root/multiroute.raw; i=$((i + 1)); done \
    | AUDIOROUTE_DEBUG=1 aplay -q -D audioroute:CATEGORY=multiRoute -t raw -f S16_LE -c 1 -r 48000 - > /run/multiroute-aplay.log 2>&1 &
  PLAYER=$!
  sleep 3
  say multiroute-playing $(alive $PLAYER) "$(grep -A3 '^pcm.!audioroute_route' $ROUTE_FILE | tr '\n' '|')" $(audioroute status --json 2>&1 | tr -d '\n')
  wait $PLAYER; status=$?; PLAYER=
  # What the cards hold after the stream's end reaches their files with the next frames: a second
  # of silence straight to each card (no session).
  sleep 1
  flush_hda
  say multiroute-done $status $(grep -c 'further output 1: dropped' /run/multiroute-aplay.log) $(grep -c 'further output 1: repeated' /run/multiroute-aplay.log) "$(grep -E 'further output|audioroute: ' /run/multiroute-aplay.log | grep -v -E 'dropped|repeated' | tail -3 | tr '\n' '|')"
  # The unplug step: the music twice more to both; 5 s in, the host unplugs the USB card (the
  # route's first output), and plugs it back about 8 s later. The stream goes on on the HDA card
  # alone, the route file naming one output, then on both again; aplay must not notice.
  NEW=$(grep -c newDeviceAvailable /run/monitor.log)
  cat /root/multiroute.raw /root/multiroute.raw \
    | AUDIOROUTE_DEBUG=1 aplay -q -D audioroute:CATEGORY=multiRoute -t raw -f S16_LE -c 1 -r 48000 - > /run/multiroute-unplug-aplay.log 2>&1 &
  PLAYER=$!
  START=$(cut -d. -f1 /proc/uptime)
  say multiroute-unplug-playing
  wait_until 600 gone card1 || fail "multiRoute unplug: card1 still there 60 s after multiroute-unplug-playing"
  wait_until 100 eval '! grep -q audioroute_route_output_1 $ROUTE_FILE' || fail "multiRoute unplug: the route file still names a further output 10 s after the USB card went"
  say multiroute-unplugged $(alive $PLAYER) "$(grep -A3 '^pcm.!audioroute_route' $ROUTE_FILE | tr '\n' '|')" $(audioroute status --json 2>&1 | tr -d '\n')
  wait_until 600 initialized card1 || fail "multiRoute unplug: no SOUND_INITIALIZED card1 within 60 s of multiroute-unplugged"
  wait_until 300 count_at_least $((NEW + 1)) newDeviceAvailable /run/monitor.log || fail "multiRoute unplug: no newDeviceAvailable within 30 s of the USB card's return"
  wait_until 100 grep -q audioroute_route_output_1 $ROUTE_FILE || fail "multiRoute unplug: the route file names no further output 10 s after the USB card came back"
  say multiroute-replugged $(alive $PLAYER) "$(grep -A3 '^pcm.!audioroute_route' $ROUTE_FILE | tr '\n' '|')" $(audioroute status --json 2>&1 | tr -d '\n')
  # Then the further output goes: the headphones' jack off 25 s into the stream (the daemon takes
  # the port out of the route), and on again 3 s later (the route file names it: the plugin opens it again).
  while [ $(($(cut -d. -f1 /proc/uptime) - START)) -lt 25 ]; do sleep 0.1; done
  guest-jack 0 "Headphone Jack" off || fail "multiRoute unplug: could not switch the Headphone Jack control off"
  wait_until 100 eval '! grep -q audioroute_route_output_1 $ROUTE_FILE' || fail "multiRoute unplug: the route file still names a further output 10 s after the jack went off"
  say multiroute-jack-off $(alive $PLAYER) "$(grep -A3 '^pcm.!audioroute_route' $ROUTE_FILE | tr '\n' '|')" $(audioroute status --json 2>&1 | tr -d '\n')
  sleep 3
  guest-jack 0 "Headphone Jack" on || fail "multiRoute unplug: could not switch the Headphone Jack control on"
  wait_until 100 grep -q audioroute_route_output_1 $ROUTE_FILE || fail "multiRoute unplug: the route file names no further output 10 s after the jack went on"
  say multiroute-jack-on $(alive $PLAYER) "$(grep -A3 '^pcm.!audioroute_route' $ROUTE_FILE | tr '\n' '|')" $(audioroute status --json 2>&1 | tr -d '\n')
  wait $PLAYER; status=$?; PLAYER=
  sleep 1
  flush_hda
  say multiroute-unplug-done $status $(grep -c '^aplay:' /run/multiroute-unplug-aplay.log) "$(grep -E 'further output|is gone|move|the route names|^aplay:' /run/multiroute-unplug-aplay.log | grep -v -E 'dropped|repeated' | tail -8 | tr '\n' '|')"
  wait_until 600 gone card1 || fail "multiRoute: card1 still there 60 s after multiroute-unplug-done"
  guest-jack 0 "Headphone Jack" off || fail "multiRoute: could not switch the Headphone Jack control off"
  wait_until 30 eval '! has_headphones' || fail "multiRoute: the headphones port stayed 30 checks after the control went off"
  sleep 1
  say multiroute-end $(wc -l < /run/monitor.log) $(audioroute status --json 2>&1 | tr -d '\n')
fi
