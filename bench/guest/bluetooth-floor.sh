# The Bluetooth bench's floor phase: sourced by bluetooth-checks.sh, checked by bench/realkernel/bluetooth/floor.py.
# The floor of the first frame: the same Connect with no player, and a plain aplay on BlueALSA's
# PCM itself, started when a client hears RouteChanged (the moment the player moves). What it
# waits for its first frame at the headset is BlueZ's, BlueALSA's and the headset side's alone.
# The trigger is a monitor read through a FIFO, line by line as it writes; guest-stamp says when
# aplay starts (floor-open), on the clock of the ear's reports.
mkfifo /run/floor.fifo
MORE_LOGS="$MORE_LOGS /run/floor-monitor.log"
n=1
while [ $n -le $CYCLES ]; do
  audioroute monitor --json --timestamps > /run/floor.fifo 2>> /run/floor-monitor.log &
  WATCH=$!
  exec 3< /run/floor.fifo
  read -r -t 30 line <&3 || fail "floor $n: audioroute monitor printed nothing within 30 s: $(cat /run/floor-monitor.log)"
  say floor-ready $n $(cut -d' ' -f1 /proc/uptime)
  connect floor-$n || fail "floor $n: Connect failed twice: $(cat /run/connect.log)"
  FLOOR=
  while read -r -t 30 line <&3; do
    case "$line" in
      *'"routeChange"'*newDeviceAvailable*"bt:$H:a2dp"*)
        guest-stamp floor-open $n -- aplay -q -D "bluealsa:DEV=$H,PROFILE=a2dp" /root/tone.wav > /run/aplay-floor-$n.log 2>&1 &
        FLOOR=$!
        # When this client had RouteChanged (its own stamp), said once aplay is on its way.
        say floor-trigger $n $(echo "$line" | sed 's/^{"monotonicNs": \([0-9]*\),.*/\1/')
        break;;
    esac
  done
  kill -TERM $WATCH 2>/dev/null; wait $WATCH 2>/dev/null; WATCH=; exec 3<&-
  [ -n "$FLOOR" ] || fail "floor $n: no RouteChanged to the headset's A2DP within 30 s of Connect"
  sleep 4
  say floor-playing $n $(alive $FLOOR)
  stop $FLOOR floor-aplay; FLOOR=
  disconnect_headset "floor $n"
  wait_until 100 no_headset_ports || fail "floor $n: the headset's ports stayed 10 s after it disconnected"
  n=$((n + 1))
done
