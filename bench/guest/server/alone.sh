# The server alone (no audiorouted), twice: stock WirePlumber, then with a rule that ranks the USB
# card's sinks first (what a user writes to get "a new device becomes the default"). Each time
# pw-play's tone on the HDA card's sink, the USB card hot-added: where the stream is 6 s after
# udev's SOUND_INITIALIZED (the host reads the cards' files), then the card removed.
RULE=/root/.config/wireplumber/main.lua.d/51-usb-first.lua
for variant in stock rule; do
  if [ $variant = rule ]; then
    mkdir -p ${RULE%/*}
    cat > $RULE <<'LUA'
-- The USB card's sinks above every other (WirePlumber 0.4's ALSA rules; the default sink is the
-- available node with the highest priority.session).
table.insert(alsa_monitor.rules, {
  matches = { { { "node.name", "matches", "alsa_output.usb-*" } } },
  apply_properties = { ["priority.session"] = 2000, ["priority.driver"] = 2000 },
})
LUA
    restart_wireplumber
  fi
  pw-play /root/tone.wav > /run/alone-play.log 2>&1 &
  PLAYER=$!
  wait_until 100 on_sink pw-play alsa_output.pci || fail "alone ($variant): pw-play's stream is not on the HDA sink: $(stream_sink pw-play)"
  say alone-ready $variant
  wait_until 600 initialized card1 || fail "alone ($variant): no SOUND_INITIALIZED card1 within 60 s of alone-ready"
  wait_until 300 sink_named alsa_output.usb || fail "alone ($variant): no USB sink"
  sleep 6
  say alone-added $variant "$(stream_sink pw-play)" "$(timeout 10 pactl get-default-sink)"
  wait_until 600 gone card1 || fail "alone ($variant): card1 still there 60 s after alone-added"
  stop $PLAYER pw-play
  PLAYER=
  say alone-done $variant
done
# AudioRoute runs beside stock WirePlumber.
rm $RULE
restart_wireplumber
