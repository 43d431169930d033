# The server's own switching against the route: the user's rule that makes a new USB card the
# default (alone.sh's: server.sh's rule_on), audiorouted running. The USB card hot-added: both
# want it. Then the user gives the USB port the lowest priority in AudioRoute: the route goes back
# to the HDA card while the server's own rule still prefers the USB sink; the stream must end
# where AudioRoute says, and stay there.
rule_on
play /root/tone.wav Music /run/fight-play.log; PLAYER=$PLAYED
wait_until 100 on_sink $PLAYER_NAME alsa_output.pci || fail "fight: $PLAYER_NAME's stream is not on the HDA sink: $(stream_sink $PLAYER_NAME)"
say fight-ready
wait_until 600 initialized card1 || fail "fight: no SOUND_INITIALIZED card1 within 60 s of fight-ready"
wait_until 200 on_sink $PLAYER_NAME alsa_output.usb || fail "fight: $PLAYER_NAME's stream did not reach the USB sink: $(stream_sink $PLAYER_NAME)"
USB_PORT=$(audioroute ports --json 2>/dev/null | tr ',' '\n' | grep -o '"uid": "usb-[^"]*/output"' | head -1 | cut -d'"' -f4)
say fight-usb "$USB_PORT"
audioroute priority "$USB_PORT" -1000 > /run/fight-priority.log 2>&1 || fail "fight: audioroute priority failed: $(cat /run/fight-priority.log)"
wait_until 200 on_sink $PLAYER_NAME alsa_output.pci || fail "fight: the stream stayed on $(stream_sink $PLAYER_NAME) after the route went back to the HDA card"
sleep 3
say fight-held "$(stream_sink $PLAYER_NAME)" "$(server_default)" "$(audioroute status 2>&1 | grep -m1 'outputs:' | tr -s ' ')"
audioroute priority "$USB_PORT" 0 > /run/fight-priority.log 2>&1
wait_until 600 gone card1 || fail "fight: card1 still there 60 s after fight-held"
stop $PLAYER $PLAYER_NAME; PLAYER=
rule_off
say fight-done
