# The Bluetooth bench's phase with --server pipewire (checked by bench/realkernel/bluetooth/pipewire.py):
# the headset connects to PipeWire's bluez5 on the computer; music (pw-play, media.role Music) on
# its A2DP; a call (pw-play, media.role Phone: a playAndRecord + voiceChat session in the tower)
# takes the route to HFP and the device's profile to headset-head-unit, interrupting the music;
# after the call the profile is a2dp-sink again and the music is heard on A2DP again. The host
# reads the headset's ear (its A2DP and SCO files) between the reports.
CARD=bluez_card.$H_
card_profile() {
  timeout 10 pactl list cards 2>/dev/null | awk -v card="$CARD" '
    /^Card #/ { this = 0 } $1 == "Name:" && $2 == card { this = 1 }
    this && /Active Profile:/ { sub(/.*Active Profile: /, ""); print; exit }'
}
card_profiles() {
  timeout 10 pactl list cards 2>/dev/null | awk -v card="$CARD" '
    /^Card #/ { this = 0 } $1 == "Name:" && $2 == card { this = 1 }
    this && /^\tProfiles:/ { on = 1; next } this && on && /^\t[A-Z]/ { on = 0 }
    this && on { sub(/^\t+/, ""); printf "%s|", $0 }'
}
# A family of profiles: PipeWire names one per codec too (a2dp-sink-sbc, headset-head-unit-cvsd).
profile_is() { case "$(card_profile)" in "$1"|"$1"-*) return 0;; esac; return 1; }
has_card() { timeout 10 pactl list short cards 2>/dev/null | grep -q "$CARD"; }
headset_ports() { audioroute ports --json 2>/dev/null | grep -o '"uid": "bt:'"$H" | wc -l; }
route_is() { audioroute status 2>/dev/null | grep -q "outputs: $1 "; }
# The sink a stream of media.role $1 plays on (pactl's sink-inputs; pipewire-pulse lists pw-play's
# role in lower case).
role_sink() {
  timeout 10 pactl list sink-inputs 2>/dev/null | awk -v role="$1" '
    /^Sink Input #/ { sink = "" } /^\tSink: / { sink = $2 }
    /media.role = / { if (index(tolower($0), "\"" tolower(role) "\"")) { print sink; exit } }' | while read -r index; do
      timeout 10 pactl list short sinks | awk -v i="$index" '$1 == i { print $2 }'
    done
}
profile_requests() { grep -iE "profile" /run/daemon.log | tail -6 | tr '\n' '|'; }
say pw-connect $(cut -d' ' -f1 /proc/uptime)
call $CDEV org.bluez.Device1.Connect > /run/connect.log 2>&1 || { sleep 2; call $CDEV org.bluez.Device1.Connect > /run/connect.log 2>&1; } \
  || fail "pipewire: Connect failed twice: $(cat /run/connect.log)"
wait_until 300 has_card || fail "pipewire: no $CARD in PipeWire 30 s after Connect: $(timeout 10 pactl list short cards 2>&1 | tr '\n' '|')"
say pw-card $(cut -d' ' -f1 /proc/uptime) "$(card_profile)" "$(card_profiles)"
if ! wait_until 200 eval '[ "$(headset_ports)" -ge 2 ]'; then
  call $CDEV org.bluez.Device1.ConnectProfile string:0000111e-0000-1000-8000-00805f9b34fb > /run/hfp-retry.log 2>&1
  say hfp-retry pipewire $? $(tr '\n' ' ' < /run/hfp-retry.log | cut -c1-160)
  wait_until 300 eval '[ "$(headset_ports)" -ge 2 ]' || fail "pipewire: the headset has not its two ports: $(audioroute ports --json 2>&1 | tr -d '\n')"
fi
wait_until 100 eval 'card_profiles | grep -q headset-head-unit' || fail "pipewire: $CARD has no headset-head-unit profile: $(card_profiles)"
wait_until 300 route_is "bt:$H:a2dp" || fail "pipewire: the route is not the headset's A2DP: $(audioroute status 2>&1 | grep -E 'outputs:|inputs:' | tr '\n' '|')"
say pw-ports "$(card_profile)" "$(card_profiles)" $(audioroute ports --json 2>&1 | tr -d '\n')
wpctl status 2>&1 | sed -n '/Audio/,/Video/p' | while read -r line; do say pw-wpctl "$line"; done
timeout 10 pw-cli ls Device 2>&1 | grep -E 'id |device.name|device.api|api.bluez5' | while read -r line; do say pw-device "$line"; done
# The music.
pw-play --media-role Music /root/tone.wav > /run/pw-music.log 2>&1 &
MUSIC=$!
wait_until 100 eval '[ -n "$(role_sink Music)" ]' || fail "pipewire: the music's stream is on no sink: pw-play $(alive $MUSIC): $(cat /run/pw-music.log); $(timeout 10 pactl list sink-inputs 2>&1 | grep -E 'Sink:|media.role|application.name' | tr -d '\t' | tr '\n' '|')"
sleep 3
say pw-music "$(role_sink Music)" "$(card_profile)" "$(timeout 10 pactl get-default-sink 2>&1)"
# The call: its own stream of media.role Phone.
say pw-call-start $(cut -d' ' -f1 /proc/uptime)
pw-play --media-role Phone /root/tone.wav > /run/pw-call.log 2>&1 &
OTHER=$!
wait_until 150 profile_is headset-head-unit || fail "pipewire: the call did not take $CARD to headset-head-unit: $(card_profile); route $(audioroute status 2>&1 | grep -E 'outputs:' | tr -s ' '); daemon: $(profile_requests)"
say pw-call-profile $(cut -d' ' -f1 /proc/uptime) "$(card_profile)"
wait_until 100 route_is "bt:$H:hfp" || fail "pipewire: the call's route is not the headset's HFP: $(audioroute status 2>&1 | grep -E 'outputs:' | tr -s ' ')"
sleep 3
say pw-call-during "$(role_sink Phone)" "$(timeout 10 pactl get-default-sink 2>&1)" "$(timeout 10 pactl get-default-source 2>&1)" \
  "$(audioroute status 2>&1 | tr -s ' ' | tr '\n' '|')" "$(profile_requests)"
say pw-call-end $(cut -d' ' -f1 /proc/uptime)
stop $OTHER pw-play-call; OTHER=
wait_until 150 profile_is a2dp-sink || fail "pipewire: $CARD did not come back to a2dp-sink after the call: $(card_profile); daemon: $(profile_requests)"
say pw-after-profile $(cut -d' ' -f1 /proc/uptime) "$(card_profile)"
wait_until 100 route_is "bt:$H:a2dp" || fail "pipewire: the route did not come back to the headset's A2DP: $(audioroute status 2>&1 | grep -E 'outputs:' | tr -s ' ')"
sleep 4
say pw-after $(alive $MUSIC) "$(role_sink Music)" "$(timeout 10 pactl get-default-sink 2>&1)"
stop $MUSIC pw-play-music; MUSIC=
say pw-status "$(audioroute status 2>&1 | tr -s ' ' | tr '\n' '|')"
call $CDEV org.bluez.Device1.Disconnect > /dev/null 2>&1
wait_until 150 is $CDEV org.bluez.Device1 Connected false || say pw-disconnect-slow
finish
