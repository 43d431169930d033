# The Bluetooth bench's system instance phase: sourced by bluetooth-checks.sh, checked by bench/realkernel/bluetooth/system.py.
# The system instance, as an embedded install runs it (docs/daemon.md, "The system unit";
# docs/alsa.md): the session daemon stopped, `audiorouted --system` as the user `audioroute`
# (group audio) with the bus policy from dbus/, its route file in /run/audioroute, and
# /etc/asound.conf hooked to it. The clients run as root with XDG_RUNTIME_DIR still set: the
# user's route file is removed, so that what they read is the system instance's by the rule
# itself (RouteFileLocation: the user's file where it exists, else the system's).
say system-setup
MORE_LOGS="$MORE_LOGS /run/daemon-system.log /run/monitor-system.log /run/reload.log"
disconnect_headset system
wait_until 100 no_headset_ports || fail "system: the headset's ports stayed 10 s after it disconnected"
kill -TERM $MONITOR $DAEMON 2>/dev/null; wait $MONITOR $DAEMON 2>/dev/null; MONITOR=; DAEMON=
rm -f $XDG_RUNTIME_DIR/audioroute/asound.conf
# scripts/install-daemon --system-user: the user, in group audio; the policy; the bus reloaded.
echo "audioroute:x:998:998::/var/lib/audioroute:/bin/false" >> /etc/passwd
echo "audioroute:x:998:" >> /etc/group
sed -i 's/^audio:x:29:$/audio:x:29:audioroute/' /etc/group
cp /usr/share/audioroute-bench/dbus/org.audioroute.AudioRoute1.conf /usr/share/dbus-1/system.d/
dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig > /run/reload.log 2>&1 || fail "system: the system bus did not reload its policy: $(cat /run/reload.log)"
# The unit's StateDirectory= (0700) and RuntimeDirectory= (0755), owned by the user; a fresh
# state: the session daemon's is moved away.
mv /var/lib/audioroute /var/lib/audioroute-session
mkdir -m 0700 /var/lib/audioroute && chown 998:998 /var/lib/audioroute
mkdir -m 0755 /run/audioroute && chown 998:998 /run/audioroute
cat > /etc/asound.conf <<'EOF'
@hooks [
  {
    func load
    files [
      "/run/audioroute/asound.conf"
    ]
    errors false
  }
]
EOF
su -s /bin/sh audioroute -c 'exec audiorouted --system --log-level info' 2> /run/daemon-system.log &
SYSTEM_DAEMON=$!
AR_BUS=--system
wait_until 300 audioroute status --system > /dev/null 2>&1 || fail "system: audiorouted --system did not answer within 30 s: $(tail -3 /run/daemon-system.log | tr '\n' '|')"
audioroute monitor --system --json --timestamps > /run/monitor-system.log 2>&1 &
MONITOR=$!
tail -f /run/daemon-system.log /run/monitor-system.log > /dev/ttyS1 2>&1 &
sleep 0.5
say system-daemon $(cat /proc/$SYSTEM_DAEMON/status | awk '/^(Uid|Groups):/ { $1 = $1; printf "%s ", $0 }') \
  session-bus $(audioroute status >/dev/null 2>&1 && echo answers || echo none) \
  files $(ls $XDG_RUNTIME_DIR/audioroute/asound.conf /run/audioroute/asound.conf 2>/dev/null | tr '\n' ' ') \
  ports $(audioroute ports --system --json 2>&1 | tr -d '\n')
# The player, --system: started on the speaker, then the headset connects.
audioroute play --system /root/tone.wav > /run/play-system.log 2>&1 &
PLAYER=$!
wait_until 100 grep -q "Speaker  playing" /run/play-system.log || fail "system: audioroute play --system did not start on the speaker: $(tail -2 /run/play-system.log)"
say sys-play-start
sleep 1
say sys-play-ready $(cut -d' ' -f1 /proc/uptime)
connect system-play || fail "system: Connect failed twice: $(cat /run/connect.log)"
wait_until 300 count_at_least 1 newDeviceAvailable /run/monitor-system.log || fail "system: no newDeviceAvailable within 30 s of Connect"
wait_until 30 route_is "bt:$H:a2dp" || fail "system: the route is not the headset's A2DP: $(audioroute status --system --json | tr -d '\n')"
sleep 2
say sys-play-moved $(tail -1 /run/play-system.log)
sleep 3
say sys-play-heard $(tail -1 /run/play-system.log)
disconnect_headset "system, the player"
wait_until 300 count_at_least 1 oldDeviceUnavailable /run/monitor-system.log || fail "system: no oldDeviceUnavailable within 30 s of the disconnect"
sleep 2
say sys-play-after $(tail -1 /run/play-system.log)
stop $PLAYER play-system; PLAYER=
wait_until 100 no_headset_ports || fail "system: the headset's ports stayed 10 s after it disconnected"
# aplay through the plugin, the same way.
AUDIOROUTE_DEBUG=1 aplay -q -D audioroute /root/music.wav > /run/aplay-system.log 2>&1 &
MUSIC=$!
sleep 1
say sys-aplay-start $(alive $MUSIC)
sleep 1
say sys-aplay-ready $(cut -d' ' -f1 /proc/uptime)
connect system-aplay || fail "system: Connect failed twice: $(cat /run/connect.log)"
wait_until 300 count_at_least 2 newDeviceAvailable /run/monitor-system.log || fail "system: no newDeviceAvailable within 30 s of the second Connect"
wait_until 30 route_is "bt:$H:a2dp" || fail "system: the route is not the headset's A2DP: $(audioroute status --system --json | tr -d '\n')"
sleep 2
say sys-aplay-moved $(alive $MUSIC)
sleep 3
say sys-aplay-heard $(alive $MUSIC)
stop $MUSIC aplay-system; MUSIC=
