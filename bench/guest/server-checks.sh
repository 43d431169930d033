# The guest's init, part 3 for scripts/test-real-server: the servers, then its phases, each its own
# script of bench/guest/server/ (in the initramfs at PHASES), sourced in this order.
PHASES=@PHASES@
if [ $SERVER = pipewire ]; then
# WirePlumber 0.4's Bluetooth monitor loads its logind module, which fails without systemd-logind
# and takes WirePlumber down with it; this guest has no Bluetooth: the user's override of the
# file that enables the monitor (a same-named file in ~/.config wins) leaves it off.
mkdir -p /root/.config/wireplumber/bluetooth.lua.d
echo "-- no Bluetooth in this guest" > /root/.config/wireplumber/bluetooth.lua.d/90-enable-all.lua
# A device WirePlumber has not seen before gets its default volume, 0.4 cubed (0.064: -24 dB,
# policy-device-routes.lua): the USB card's tone then stayed under the host's threshold of a loud
# frame in its file. Full volume here (read after 40-device-defaults.lua, before the enable).
mkdir -p /root/.config/wireplumber/main.lua.d
echo 'device_defaults.properties["default-volume"] = 1.0' > /root/.config/wireplumber/main.lua.d/41-audioroute-bench-volume.lua
fi
start_servers
watch_server
# Which sink a client's stream is on: `SINK-NAME` of the first stream whose application.name is $1.
stream_sink() {
  timeout 10 pactl list sink-inputs 2>/dev/null | awk -v app="$1" '
    /^Sink Input #/ { sink = "" } /^\tSink: / { sink = $2 }
    /application.name = / { if (index($0, "\"" app "\"")) { print sink; exit } }' | while read -r index; do
      timeout 10 pactl list short sinks | awk -v i="$index" '$1 == i { print $2 }'
    done
}
on_sink() { stream_sink "$1" | grep -q "$2"; }
# test-real-server --only PHASE: that phase alone (the kernel's command line gives AUDIOROUTE_ONLY).
wanted() { [ -z "$AUDIOROUTE_ONLY" ] || [ "$AUDIOROUTE_ONLY" = "$1" ]; }
wanted alone && . $PHASES/alone.sh
start_daemon
wanted follow && . $PHASES/follow.sh
wanted plugin && . $PHASES/plugin.sh
wanted tower && . $PHASES/tower.sh
wanted fight && . $PHASES/fight.sh
wanted profile && . $PHASES/profile.sh
finish
