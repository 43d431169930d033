# The server driven by audiorouted: a client's stream (pw-play, then paplay; paplay alone on
# PulseAudio) started on the HDA card's sink lands on the hot-added USB card's sink and comes back
# on its removal; the host reads both from the cards' files and times the first USB frame against
# SOUND_INITIALIZED.
for client in $FOLLOW_CLIENTS; do
  $client /root/tone.wav > /run/follow-$client.log 2>&1 &
  PLAYER=$!
  wait_until 100 on_sink $client alsa_output.pci || fail "follow: $client's stream is not on the HDA sink: $(stream_sink $client)"
  sleep 1
  say follow-ready $client
  wait_until 600 initialized card1 || fail "follow: no SOUND_INITIALIZED card1 within 60 s of follow-ready $client"
  wait_until 200 on_sink $client alsa_output.usb || fail "follow: $client's stream did not reach the USB sink within 20 s: $(stream_sink $client); $(audioroute status 2>&1 | grep 'Server defaults')"
  sleep 1.5
  say follow-added $client "$(stream_sink $client)" "$(timeout 10 pactl get-default-sink)"
  wait_until 600 gone card1 || fail "follow: card1 still there 60 s after follow-added $client"
  wait_until 200 on_sink $client alsa_output.pci || fail "follow: $client's stream did not come back to the HDA sink: $(stream_sink $client)"
  sleep 1.5
  say follow-removed $client "$(stream_sink $client)"
  stop $PLAYER $client
  PLAYER=
done
