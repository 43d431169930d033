# The server alone (no audiorouted), twice: as shipped, then with the user's rule that makes a new
# USB card the default (server.sh's rule_on: a WirePlumber rule ranking its sinks first, or
# PulseAudio's module-switch-on-connect). Each time the player's tone on the HDA card's sink, the
# USB card hot-added: where the stream is 6 s after udev's SOUND_INITIALIZED (the host reads the
# cards' files), then the card removed.
for variant in stock rule; do
  [ $variant = rule ] && rule_on
  play /root/tone.wav "" /run/alone-play.log
  PLAYER=$PLAYED
  wait_until 100 on_sink $PLAYER_NAME alsa_output.pci || fail "alone ($variant): $PLAYER_NAME's stream is not on the HDA sink: $(stream_sink $PLAYER_NAME)"
  say alone-ready $variant
  wait_until 600 initialized card1 || fail "alone ($variant): no SOUND_INITIALIZED card1 within 60 s of alone-ready"
  wait_until 300 sink_named alsa_output.usb || fail "alone ($variant): no USB sink"
  sleep 6
  say alone-added $variant "$(stream_sink $PLAYER_NAME)" "$(timeout 10 pactl get-default-sink)"
  wait_until 600 gone card1 || fail "alone ($variant): card1 still there 60 s after alone-added"
  stop $PLAYER $PLAYER_NAME
  PLAYER=
  say alone-done $variant
done
# AudioRoute runs beside the server as shipped.
rule_off
