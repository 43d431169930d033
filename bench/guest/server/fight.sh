# The server's own switching against the route: WirePlumber with the rule that ranks USB sinks
# first (alone.sh's), audiorouted running. The USB card hot-added: both want it. Then the user
# gives the USB port the lowest priority in AudioRoute: the route goes back to the HDA card while
# WirePlumber's own ranking still prefers the USB sink; the stream must end where AudioRoute says
# (its configured default is WirePlumber's first choice), and stay there.
RULE=/root/.config/wireplumber/main.lua.d/51-usb-first.lua
mkdir -p ${RULE%/*}
cat > $RULE <<'LUA'
table.insert(alsa_monitor.rules, {
  matches = { { { "node.name", "matches", "alsa_output.usb-*" } } },
  apply_properties = { ["priority.session"] = 2000, ["priority.driver"] = 2000 },
})
LUA
restart_wireplumber
pw-play --media-role Music /root/tone.wav > /run/fight-play.log 2>&1 &
PLAYER=$!
wait_until 100 on_sink pw-play alsa_output.pci || fail "fight: pw-play's stream is not on the HDA sink: $(stream_sink pw-play)"
say fight-ready
wait_until 600 initialized card1 || fail "fight: no SOUND_INITIALIZED card1 within 60 s of fight-ready"
wait_until 200 on_sink pw-play alsa_output.usb || fail "fight: pw-play's stream did not reach the USB sink: $(stream_sink pw-play)"
USB_PORT=$(audioroute ports --json 2>/dev/null | tr ',' '\n' | grep -o '"uid": "usb-[^"]*/output"' | head -1 | cut -d'"' -f4)
say fight-usb "$USB_PORT"
audioroute priority -- "$USB_PORT" -1000 > /run/fight-priority.log 2>&1 || fail "fight: audioroute priority failed: $(cat /run/fight-priority.log)"
wait_until 200 on_sink pw-play alsa_output.pci || fail "fight: the stream stayed on $(stream_sink pw-play) after the route went back to the HDA card"
sleep 3
say fight-held "$(stream_sink pw-play)" "$(timeout 10 pw-metadata -n default 0 default.audio.sink 2>/dev/null | grep -o 'alsa_output[^\"]*' | head -1)" "$(audioroute status 2>&1 | grep -m1 'outputs:' | tr -s ' ')"
audioroute priority "$USB_PORT" 0 > /run/fight-priority.log 2>&1
wait_until 600 gone card1 || fail "fight: card1 still there 60 s after fight-held"
stop $PLAYER pw-play; PLAYER=
rm $RULE
restart_wireplumber
say fight-done
