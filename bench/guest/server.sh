# The guest's init, part 2 for scripts/test-real-server: the user session with a sound server. The
# session bus; then (start_servers) the server as a desktop starts it (as root here: the guest has
# no other user), logging to /run/<name>.log: PipeWire, WirePlumber and pipewire-pulse, or
# PulseAudio with Debian's default.pa; and later (start_daemon) audiorouted: the first phase
# measures the server alone. Each server's own ways are functions below: the player of the
# phases, the rule that makes a new USB card the default, the server's default sink.
SERVER=@SERVER@
mkdir -p /run/user/0 /var/lib/audioroute
MORE_LOGS="/run/dbus.log /run/pipewire.log /run/wireplumber.log /run/pipewire-pulse.log /run/pulseaudio.log /run/server-events.log"
export HOME=/root XDG_RUNTIME_DIR=/run/user/0 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus
# Clients never read the console (pw-cli with a terminal on stdin stays interactive).
exec < /dev/null
dbus-daemon --config-file=/usr/share/dbus-1/session.conf --address=$DBUS_SESSION_BUS_ADDRESS --fork --nopidfile 2>/run/dbus.log || fail "dbus-daemon did not start"
sink_named() { timeout 10 pactl list short sinks 2>/dev/null | grep -q "$1"; }
start_servers() { start_$SERVER; }
start_pipewire() {
  pipewire > /run/pipewire.log 2>&1 &
  SERVERS=$!
  wait_until 30 timeout 3 pw-cli info 0 > /dev/null 2>&1 || fail "pipewire did not answer: $(tail -5 /run/pipewire.log | tr '\n' '|')"
  # Its first start at the info level, apart: what it did is said if it makes no sink in time.
  WIREPLUMBER_DEBUG=3 wireplumber > /run/wireplumber-start.log 2>&1 &
  WIREPLUMBER=$!
  pipewire-pulse > /run/pipewire-pulse.log 2>&1 &
  SERVERS="$SERVERS $!"
  wait_for_sinks
  say server $(cut -d' ' -f1 /proc/uptime) "$(pipewire --version 2>&1 | tail -1)"
  timeout 10 pactl list short sinks 2>&1 | while read -r line; do say sink "$line"; done
}
# WirePlumber again (its configuration changed), as a user restarts it.
restart_wireplumber() {
  stop $WIREPLUMBER wireplumber
  wireplumber >> /run/wireplumber.log 2>&1 &
  WIREPLUMBER=$!
  wait_for_sinks
  watch_metadata
}
wait_for_sinks() {
  # WirePlumber made the HDA card's sink (its ALSA monitor, through udev) and chose it as the default.
  wait_until 200 sink_named alsa_output.pci && return
  # In about one start in five on this bench WirePlumber 0.4.13 had no sink for the card after
  # 20 s and more (no error at its default log level; its info log showed the card's device made
  # and its profiles still being probed). What it said is kept, and it is started again once, as
  # a user would restart it; a second miss fails the run.
  say wireplumber-again "$(timeout 10 pw-cli ls Device 2>&1 | grep -c alsa_card) ALSA devices;" \
    "$(grep -iE 'alsa|reserve|acp' /run/wireplumber-start.log | tail -8 | tr '\n' '|')"
  stop $WIREPLUMBER wireplumber
  wireplumber >> /run/wireplumber.log 2>&1 &
  WIREPLUMBER=$!
  wait_until 300 sink_named alsa_output.pci || fail "no HDA sink: $(timeout 10 pactl list short sinks 2>&1 | tr '\n' '|') $(tail -5 /run/wireplumber.log | tr '\n' '|')"
}
# What the server says as it happens, each line stamped with the guest's CLOCK_MONOTONIC
# (/proc/uptime): the default metadata's changes and pactl's events (a sink new, a stream
# changed), for the host's split of first audio.
stamped() { while read -r line; do echo "$(cut -d' ' -f1 /proc/uptime) $line"; done; }
watch_server() {
  pactl subscribe 2>&1 | stamped >> /run/server-events.log &
  [ $SERVER = pipewire ] && watch_metadata
}
# WirePlumber makes the default metadata: watched again after each restart of it.
watch_metadata() {
  pkill -f "pw-metadata -m" 2>/dev/null
  pw-metadata -m -n default 2>&1 | stamped >> /run/server-events.log &
}
# PulseAudio 16.1 with Debian's own default.pa (module-udev-detect, module-stream-restore,
# module-role-cork, ...; its Bluetooth, logind and X11 modules are not in the image, and
# default.pa loads them only if present).
start_pulseaudio() {
  pulseaudio --daemonize=no --exit-idle-time=-1 --log-target=file:/run/pulseaudio.log --log-level=info > /run/pulseaudio.out 2>&1 &
  SERVERS=$!
  wait_until 300 sink_named alsa_output.pci || fail "PulseAudio made no HDA sink: $(tail -5 /run/pulseaudio.log | tr '\n' '|') $(tail -3 /run/pulseaudio.out | tr '\n' '|')"
  say server $(cut -d' ' -f1 /proc/uptime) "$(pulseaudio --version 2>&1 | tail -1)"
  timeout 10 pactl list short sinks 2>&1 | while read -r line; do say sink "$line"; done
}
# The phases' player: the file ($1) played as a stream of role $2 (none: no role), logging to $3.
play() {
  if [ $SERVER = pipewire ]; then pw-play ${2:+--media-role $2} "$1" > "$3" 2>&1 &
  else PULSE_PROP=${2:+media.role=$2} paplay "$1" > "$3" 2>&1 &
  fi
  PLAYED=$!
}
PLAYER_NAME=$([ $SERVER = pipewire ] && echo pw-play || echo paplay)
FOLLOW_CLIENTS=$([ $SERVER = pipewire ] && echo "pw-play paplay" || echo paplay)
# The user's rule that makes a new USB card the default, on and off: for WirePlumber, ranking the
# USB card's sinks first (WirePlumber 0.4's ALSA rules; its default sink is the available node with
# the highest priority.session); for PulseAudio, module-switch-on-connect.
RULE=/root/.config/wireplumber/main.lua.d/51-usb-first.lua
rule_on() {
  if [ $SERVER = pulseaudio ]; then
    timeout 10 pactl load-module module-switch-on-connect > /run/rule-module.log 2>&1 || fail "cannot load module-switch-on-connect: $(cat /run/rule-module.log)"
    return
  fi
  mkdir -p ${RULE%/*}
  cat > $RULE <<'LUA'
table.insert(alsa_monitor.rules, {
  matches = { { { "node.name", "matches", "alsa_output.usb-*" } } },
  apply_properties = { ["priority.session"] = 2000, ["priority.driver"] = 2000 },
})
LUA
  restart_wireplumber
}
rule_off() {
  if [ $SERVER = pulseaudio ]; then timeout 10 pactl unload-module module-switch-on-connect; return; fi
  rm $RULE
  restart_wireplumber
}
# The server's own default sink (WirePlumber's choice, under AudioRoute's configured one).
server_default() {
  if [ $SERVER = pipewire ]; then timeout 10 pw-metadata -n default 0 default.audio.sink 2>/dev/null | grep -o 'alsa_output[^"]*' | head -1
  else timeout 10 pactl get-default-sink
  fi
}
start_daemon() {
  audiorouted --state-dir /var/lib/audioroute --log-level info 2>/run/daemon.log &
  DAEMON=$!
  wait_until 300 audioroute status >/dev/null 2>&1 || fail "audiorouted did not answer within 30 s"
  audioroute monitor --json --timestamps > /run/monitor.log 2>&1 &
  MONITOR=$!
  say daemon $(cut -d' ' -f1 /proc/uptime)
}
/usr/bin/guest-clock > /dev/ttyS0 &
say booted $(cut -d' ' -f1 /proc/uptime)
