# The kernel bench's capture phase, its guest part (its checks: bench/realkernel/capture.py); sourced by
# kernel-checks.sh, after the phases before it.
# Capture: two readers of the route's input through the plugin at once, while the host hot-adds
# the output-only USB card and removes it: a playAndRecord session, which controls the route (its
# output moves to the USB card and back, its input stays the mic), and a playAndRecord one with
# mixWithOthers, which does not interrupt it. A record session cannot be one of them: it is
# non-mixable, so it would interrupt the first or be interrupted by it (and an interrupted reader
# reads nothing), and controlling the route it has no output for the USB card to move. The mic
# records the host's signal file (mic_argv); the recordings go back on the virtio disk.
if [ -n "$CAPTURE" ]; then
  MORE_LOGS="$MORE_LOGS /run/capture-*.log"
  wait_until 100 test -b /dev/vda || fail "capture: no virtio disk /dev/vda for the recordings"
  NEW=$(grep -c newDeviceAvailable /run/monitor.log); OLD=$(grep -c oldDeviceUnavailable /run/monitor.log)
  aplay -C -q -D audioroute_capture:CATEGORY=playAndRecord -f S16_LE -c 2 -r 48000 -t raw /run/capture-call.raw > /run/capture-call.log 2>&1 &
  READER=$!
  aplay -C -q -D audioroute_capture:CATEGORY=playAndRecord,OPTIONS=mixWithOthers -f S16_LE -c 2 -r 48000 -t raw /run/capture-mix.raw > /run/capture-mix.log 2>&1 &
  OTHER=$!
  sleep 1.5
  # What the readers open: the route file's input PCM, and the card's capture PCMs in use (the
  # kernel's hw_params: one hardware stream, shared).
  say capture-route "$(grep -A4 "audioroute_route_capture" $ROUTE_FILE | tr '\n' '|')"
  say capture-hw "$(for f in /proc/asound/card0/pcm*c/sub*/status; do echo "$f: $(head -1 $f)"; done | tr '\n' '|')"
  say capture-ready $(cut -d' ' -f1 /proc/uptime) $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  wait_until 600 initialized card1 || fail "capture: no SOUND_INITIALIZED card1 within 60 s of capture-ready"
  wait_until 300 count_at_least $((NEW + 1)) newDeviceAvailable /run/monitor.log || fail "capture: no newDeviceAvailable within 30 s"
  sleep 1.5
  say capture-added $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  wait_until 600 gone card1 || fail "capture: card1 still there 60 s after capture-added"
  wait_until 300 count_at_least $((OLD + 1)) oldDeviceUnavailable /run/monitor.log || fail "capture: no oldDeviceUnavailable within 30 s"
  sleep 1.5
  say capture-removed $(cut -d' ' -f1 /proc/uptime) $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  kill -TERM $READER $OTHER 2>/dev/null; wait $READER; a=$?; wait $OTHER; b=$?; READER=; OTHER=
  dd if=/run/capture-call.raw of=/dev/vda bs=1M conv=fsync > /run/capture-dd.log 2>&1 \
    && dd if=/run/capture-mix.raw of=/dev/vda bs=1M seek=$((CAPTURE_SLOT >> 20)) conv=fsync >> /run/capture-dd.log 2>&1 \
    || fail "capture: could not write the recordings to /dev/vda: $(tr '\n' '|' < /run/capture-dd.log)"
  say capture-done $a $b $(wc -c < /run/capture-call.raw) $(wc -c < /run/capture-mix.raw)
fi
