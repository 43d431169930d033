# The server alone (no audiorouted): pw-play's tone on the HDA card's sink, the USB card
# hot-added: where the stream is 6 s after udev's SOUND_INITIALIZED (the host reads the cards'
# files), then the card removed.
pw-play /root/tone.wav > /run/alone-play.log 2>&1 &
PLAYER=$!
wait_until 100 on_sink pw-play alsa_output.pci || fail "alone: pw-play's stream is not on the HDA sink: $(stream_sink pw-play)"
say alone-ready
wait_until 600 initialized card1 || fail "alone: no SOUND_INITIALIZED card1 within 60 s of alone-ready"
wait_until 300 sink_named alsa_output.usb || fail "alone: no USB sink within 30 s"
sleep 6
say alone-added "$(stream_sink pw-play)" "$(timeout 10 pactl get-default-sink)"
wait_until 600 gone card1 || fail "alone: card1 still there 60 s after alone-added"
stop $PLAYER pw-play
PLAYER=
say alone-done
