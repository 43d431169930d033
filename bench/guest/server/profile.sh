# The card's profile follows the route: with the route on the HDA card's speaker, the card's
# profile set to "off" (its sink goes): AudioRoute sets a profile with an output again, and
# the player's tone (pw-play, or paplay on PulseAudio) reaches the card (the host reads its file). Then "output:analog-stereo" (no
# source) and a Phone stream (playAndRecord, voiceChat: the route records from the card's mic):
# the profile becomes one with an input, and the default source is the card's. Each profile is
# read back from the server (pactl list cards); the card's first profile is set again at the end.
HDA_CARD=$(timeout 10 pactl list short cards 2>/dev/null | awk '/alsa_card\.pci/ { print $2; exit }')
card_profile() {
  timeout 10 pactl list cards 2>/dev/null | awk -v card="$HDA_CARD" '
    /^Card #/ { this = 0 } $1 == "Name:" && $2 == card { this = 1 }
    this && /Active Profile:/ { sub(/.*Active Profile: /, ""); print; exit }'
}
profile_is_not() { [ "$(card_profile)" != "$1" ]; }
has_input() { card_profile | grep -q 'input:'; }
FIRST_PROFILE=$(card_profile)
say profile-start "$HDA_CARD" "$FIRST_PROFILE" "$(audioroute status 2>&1 | grep -m1 'outputs:' | tr -s ' ')"
pactl set-card-profile "$HDA_CARD" off > /run/profile-set.log 2>&1 || fail "profile: pactl set-card-profile off failed: $(cat /run/profile-set.log)"
say profile-off
# What the daemon said of the card, and what its helper reports of it, for a failure's message.
PROFILE_HELPER=$([ $SERVER = pipewire ] && echo audioroute-pipewire || echo audioroute-pulse)
profile_log() {
  echo "daemon: $(grep -iE "card's profile|card profile|profile" /run/daemon.log | tail -4 | tr '\n' '|')"
  echo "helper: $(sleep 2 | timeout 10 $PROFILE_HELPER 2>&1 | grep -E '"device"' | cut -c1-400 | tr '\n' '|')"
}
wait_until 100 profile_is_not off || fail "profile: the HDA card stayed off: $(profile_log)"
say profile-restored "$(card_profile)" "$(timeout 10 pactl get-default-sink 2>&1)"
play /root/tone.wav "" /run/profile-play.log; PLAYER=$PLAYED
wait_until 100 on_sink $PLAYER_NAME alsa_output.pci || fail "profile: $PLAYER_NAME's stream is not on the HDA sink: $(stream_sink $PLAYER_NAME); the card's profile $(card_profile)"
sleep 1
say profile-playing "$(stream_sink $PLAYER_NAME)"
stop $PLAYER $PLAYER_NAME; PLAYER=
# Output only: it serves the speaker, and is kept; a Phone stream then needs the card's mic.
pactl set-card-profile "$HDA_CARD" output:analog-stereo > /run/profile-set.log 2>&1 || fail "profile: pactl set-card-profile output:analog-stereo failed: $(cat /run/profile-set.log)"
sleep 1
say profile-output "$(card_profile)"
play /root/tone.wav Phone /run/profile-call.log; PLAYER=$PLAYED
wait_until 100 has_input || fail "profile: no input in the HDA card's profile under a Phone stream: $(card_profile); $(audioroute status 2>&1 | grep -m1 'inputs:'); $(profile_log)"
sleep 0.5
say profile-input "$(card_profile)" "$(timeout 10 pactl get-default-source 2>&1)" "$(audioroute status 2>&1 | grep -m1 'inputs:' | tr -s ' ')"
stop $PLAYER $PLAYER_NAME; PLAYER=
pactl set-card-profile "$HDA_CARD" "$FIRST_PROFILE" > /run/profile-set.log 2>&1
say profile-done "$(card_profile)"
