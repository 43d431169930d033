# The kernel bench's surround phase, its guest part (its checks: bench/realkernel/surround.py); sourced by
# kernel-checks.sh, after the phases before it.
# A second, multichannel USB card (QEMU's usb-audio with multi=on: stereo, 5.1 and 7.1 altsets),
# hot-plugged by the host on surround-ready: its output port is dmix at the card's channels, and
# a 6-channel stream and then a stereo one reach it through the plugin; the host reads the card's
# own WAV file.
if [ -n "$SURROUND" ]; then
  say surround-ready
  wait_until 600 initialized card1 || fail "surround: no SOUND_INITIALIZED card1 within 60 s of surround-ready"
  wait_until 300 grep -q 'CHANNELS=' $ROUTE_FILE || fail "surround: the route's output is not dmix with CHANNELS 30 s after card1: $(tr '\n' '|' < $ROUTE_FILE)"
  say surround-added "$(tr '\n' '|' < /proc/asound/card1/stream0)"
  say surround-ports $(audioroute ports --json 2>&1 | tr -d '\n')
  say surround-explain "$(audioroute ports --direct --explain 2>/dev/null | grep -E 'usb stream|channels \(' | tr '\n' '|')"
  say surround-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
  say surround-chmaps "$(chmap-probe audioroute 6 2>&1 | tr '\n' '|')" "$(chmap-probe audioroute 2 2>&1 | tr '\n' '|')"
  aplay -q -D audioroute /root/surround-six.wav > /run/aplay-surround-six.log 2>&1 || fail "surround: aplay -D audioroute of the 6-channel stream failed: $(tr '\n' '|' < /run/aplay-surround-six.log)"
  sleep 1
  say surround-six
  aplay -q -D audioroute /root/surround-stereo.wav > /run/aplay-surround-stereo.log 2>&1 || fail "surround: aplay -D audioroute of the stereo stream failed: $(tr '\n' '|' < /run/aplay-surround-stereo.log)"
  sleep 1
  say surround-stereo
  wait_until 600 gone card1 || fail "surround: card1 still there 60 s after surround-stereo"
  wait_until 300 eval '! grep -q CHANNELS= $ROUTE_FILE' || fail "surround: the route still names CHANNELS 30 s after card1 left"
  say surround-removed $(audioroute ports --json 2>&1 | tr -d '\n')
fi
