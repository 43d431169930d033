# The guest's init, part 2: the user session (session bus, daemon, monitor, clock), shared by both benches.
# The session bus and the daemon, as a user session has them.
mkdir -p /run/user/0 /var/lib/audioroute
export HOME=/root XDG_RUNTIME_DIR=/run/user/0 DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus
dbus-daemon --config-file=/usr/share/dbus-1/session.conf --address=$DBUS_SESSION_BUS_ADDRESS --fork --nopidfile 2>/run/dbus.log || fail "dbus-daemon did not start"
audiorouted --state-dir /var/lib/audioroute --log-level info 2>/run/daemon.log &
DAEMON=$!
wait_until 300 audioroute status >/dev/null 2>&1 || fail "audiorouted did not answer within 30 s"
say daemon $(cut -d' ' -f1 /proc/uptime)
say ports $(audioroute ports --json 2>&1 | tr -d '\n')
# The plugin's channel maps on the HDA card (dmix: the layout it runs), for a stereo stream and
# for a 5.1 one (Tests/Helpers/chmap-probe).
say chmaps "$(chmap-probe audioroute 2 2>&1 | tr '\n' '|')" "$(chmap-probe audioroute 6 2>&1 | tr '\n' '|')"
# What the card says, as the watcher reads it (its control device's ioctls, the codec file; the
# daemon's own code, in-process with --direct), and as the kernel's own tools print it: the host
# compares them.
say explain "$(audioroute ports --direct --explain --json 2>/dev/null | tr -d '\n')"
aplay -l 2>&1 | while read -r line; do say aplay "$line"; done
aplay -C -l 2>&1 | while read -r line; do say arecord "$line"; done
amixer -c 0 info 2>&1 | while read -r line; do say amixer "$line"; done
for codec in /proc/asound/card0/codec#*; do
  [ -e "$codec" ] || continue
  grep -E '^Node 0x[0-9a-f]+ \[Pin Complex\]|^  Pincap 0x|^  Pin Default 0x' "$codec" | while read -r line; do say codec "${codec##*#}" "$line"; done
done
audioroute monitor --json --timestamps > /run/monitor.log 2>&1 &
MONITOR=$!
sleep 0.2
# The logs, as they grow, on the second serial port: the host keeps them when a run fails midway.
tail -f /run/daemon.log /run/monitor.log /run/uevents.raw /run/udevd.log > /dev/ttyS1 2>&1 &
if [ -n "$AUDIOROUTE_SHELL" ]; then
  # By hand (--shell): a shell on the console, with the session bus and the daemon running.
  echo "audiorouted runs; its log: /run/daemon.log; the monitor's: /run/monitor.log; uevents: /run/uevents.raw"
  echo "try: audioroute ports; audioroute play /root/tone.wav &; AUDIOROUTE_DEBUG=1 aplay -D audioroute /root/music.wav &"
  echo "     Ctrl-a c for QEMU's monitor; exit to power off"
  setsid cttyhack /bin/sh
  poweroff -f
fi
# The clock the host reads the guest's time from: CLOCK_MONOTONIC on the console, 50 times a second.
/usr/bin/guest-clock > /dev/ttyS0 &
say booted $(cut -d' ' -f1 /proc/uptime)
