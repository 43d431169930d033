#!/bin/sh
# What the shipped `audioroute` ALSA plugin costs a client (docs/alsa.md, "Plugin"): the time of
# the first snd_pcm_open in a fresh process, and aplay's maximum resident set, for
#   null       the configuration alone, no plugin;
#   no-daemon  the plugin with no daemon on the bus (it follows the route file alone);
#   session    the plugin with audiorouted on a private session bus (its session in the tower).
# The route is a file PCM over null, so nothing is paced and no sound card is needed.
# Usage: Benchmarks/plugin-cost/measure.sh [RUNS] [AUDIOROUTED]
#   (default 30 runs; the daemon .build/debug/audiorouted; needs cc, libasound2-dev, aplay, dbus-daemon)
set -eu
RUNS=${1:-30}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DAEMON=${2:-$ROOT/.build/debug/audiorouted}
W=$(mktemp -d)
BUS_PID= DAEMON_PID=
cleanup() {
    [ -z "$DAEMON_PID" ] || { kill "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null; } || true
    [ -z "$BUS_PID" ] || kill "$BUS_PID" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT INT TERM
PLUGIN=$("$ROOT/scripts/build-alsa-plugin" "$W/plugin" | tail -1)
cc -O2 -o "$W/loadtime" "$ROOT/Benchmarks/plugin-language/loadtime.c" -lasound
mkdir -p "$W/run/audioroute"
printf 'pcm.!audioroute_route { type plug slave.pcm "costfile" }\npcm.!audioroute { type plug slave.pcm "costfile" }\n' \
    > "$W/run/audioroute/asound.conf"
sed "s|lib \"libasound_module_pcm_audioroute.so\"|lib \"$PLUGIN\"|" "$ROOT/share/alsa/50-audioroute.conf" > "$W/.asoundrc"
printf 'pcm.!costfile { type file slave.pcm "null" file "/dev/null" format "raw" }\n' >> "$W/.asoundrc"
head -c 1920000 /dev/zero > "$W/ten-seconds.raw"
export HOME="$W" XDG_RUNTIME_DIR="$W/run"

median_max() { sort -n | awk '{ v[NR] = $1 } END { printf "median %d us, worst %d us\n", v[int((NR + 1) / 2)], v[NR] }'; }
measure() {
    echo "$1: open $(for i in $(seq "$RUNS"); do "$W/loadtime" "$2"; done | median_max);" \
        "aplay max RSS $(/usr/bin/time -f %M aplay -q -D "$2" -t raw -f S16_LE -c 2 -r 48000 "$W/ten-seconds.raw" 2>&1) kB"
}

export DBUS_SESSION_BUS_ADDRESS="unix:path=$W/no-bus"
measure null null
measure no-daemon audioroute
set -- $(dbus-daemon --session --fork --print-address=1 --print-pid=1)
export DBUS_SESSION_BUS_ADDRESS="$1"
BUS_PID=$2
NOTIFY_SOCKET= "$DAEMON" --state-dir "$W/state" --runtime-dir "$W/daemon-run" --log-level error &
DAEMON_PID=$!
until busctl --user status org.audioroute.AudioRoute1 >/dev/null 2>&1 || dbus-send --session --print-reply --dest=org.audioroute.AudioRoute1 \
        /org/audioroute/AudioRoute1 org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; do sleep 0.1; done
measure session audioroute
