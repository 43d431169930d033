# `aplay -D audioroute` where the server owns the cards: the route file names the server's `pulse`
# PCM, aplay's stream is the server's (on the route's sink) and its session is in the tower.
say plugin-route "$(grep -c 'slave.pcm "pulse"' /run/user/0/audioroute/asound.conf)"
aplay -q -D audioroute /root/tone.wav > /run/aplay-server.log 2>&1 &
PLAYER=$!
wait_until 100 on_sink "ALSA plug-in [aplay]" alsa_output.pci || fail "plugin: aplay's stream is not on the HDA sink: $(stream_sink 'ALSA plug-in [aplay]'); $(tr '\n' '|' < /run/aplay-server.log)"
sleep 2
say plugin-playing "$(stream_sink 'ALSA plug-in [aplay]')" "$(audioroute status --json 2>&1 | tr -d '\n')"
# The card while the server plays on it: what a client that opens it directly gets (the route
# file's PCMs before the server was known: the card's dmix, an exclusive port's plughw).
for pcm in dmix:CARD=Intel,DEV=0 plughw:CARD=Intel,DEV=0; do
  say plugin-busy $pcm "$(timeout 10 aplay -q -D $pcm -d 1 /root/tone.wav 2>&1 | tail -1)"
done
stop $PLAYER aplay
PLAYER=
