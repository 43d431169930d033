# The guest's init, part 2 for scripts/test-real-server: the user session with a sound server. The
# session bus; then (start_servers) PipeWire, WirePlumber and pipewire-pulse as a desktop starts
# them (as root here: the guest has no other user), each logging to /run/<name>.log; and later
# (start_daemon) audiorouted: the first phase measures the server alone.
mkdir -p /run/user/0 /var/lib/audioroute
MORE_LOGS="/run/dbus.log /run/pipewire.log /run/wireplumber.log /run/pipewire-pulse.log /run/server-events.log"
export HOME=/root XDG_RUNTIME_DIR=/run/user/0 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus
# Clients never read the console (pw-cli with a terminal on stdin stays interactive).
exec < /dev/null
dbus-daemon --config-file=/usr/share/dbus-1/session.conf --address=$DBUS_SESSION_BUS_ADDRESS --fork --nopidfile 2>/run/dbus.log || fail "dbus-daemon did not start"
sink_named() { timeout 10 pactl list short sinks 2>/dev/null | grep -q "$1"; }
start_servers() {
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
  watch_metadata
}
# WirePlumber makes the default metadata: watched again after each restart of it.
watch_metadata() {
  pkill -f "pw-metadata -m" 2>/dev/null
  pw-metadata -m -n default 2>&1 | stamped >> /run/server-events.log &
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
