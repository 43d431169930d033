# The Bluetooth bench's init, after the boot: the system bus as Debian runs it (system.conf with
# bluez's and BlueALSA's policy files), btvirt, bluetoothd, BlueALSA on both sides, the ear.
# The host fills in the name between at-signs: BT_MODULES (guest_init).
# bluetoothd logs through syslog: busybox's syslogd keeps it (errors and notices: with -d, its
# debug lines would take minutes to send at the end; --explore's shell can restart it with -d).
syslogd -n -O /run/syslog.log &
MORE_LOGS="/run/syslog.log /run/btsignals.log /run/agent.log /run/bluealsa-src.log /run/bluealsa-sink*.log /run/ear.log /run/play-*.log /run/btvirt.log"
for m in @BT_MODULES@; do modprobe $m 2>/run/modprobe.log || fail "modprobe $m: $(cat /run/modprobe.log)"; done
mkdir -p /run/dbus /var/lib/bluetooth; [ -e /var/run ] || ln -s /run /var/run
# The computer's audio: BlueALSA on hci0, or (test-real-bluetooth --server pipewire) PipeWire's
# own bluez5, which bluetooth-pipewire-session.sh starts; then the headset's BlueALSA is the user
# `headset`'s (below), who must exist before the bus reads its policy.
BT_COMPUTER=@BT_COMPUTER@
if [ $BT_COMPUTER = pipewire ]; then
  echo "headset:x:1001:112::/nonexistent:/bin/false" >> /etc/passwd
  echo "bluetooth:x:112:headset" >> /etc/group
  sed -i 's/^audio:x:29:.*/audio:x:29:headset/' /etc/group
fi
dbus-daemon --system --fork 2>/run/dbus-system.log || fail "the system bus did not start: $(cat /run/dbus-system.log)"
btvirt -l2 > /run/btvirt.log 2>&1 &
wait_until 100 [ -e /sys/class/bluetooth/hci1 ] || fail "btvirt -l2 made no hci0 and hci1: $(cat /run/btvirt.log)"
/usr/libexec/bluetooth/bluetoothd -n > /run/bluetoothd.log 2>&1 &
BLUETOOTHD=$!
# Properties and calls on the system bus.
get() { dbus-send --system --print-reply --dest=org.bluez $1 org.freedesktop.DBus.Properties.Get string:$2 string:$3 2>/dev/null | sed -n 's/^ *variant *[a-z0-9]* //p' | tr -d '"'; }
set_prop() { dbus-send --system --print-reply --dest=org.bluez $1 org.freedesktop.DBus.Properties.Set string:$2 string:$3 variant:$4 > /dev/null; }
# For wait_until, which runs its command again each time: a property that exists, or has a value.
has() { [ -n "$(get $1 $2 $3)" ]; }
is() { [ "$(get $1 $2 $3)" = "$4" ]; }
call() { local path=$1 method=$2; shift 2; dbus-send --system --print-reply --reply-timeout=${TIMEOUT_MS:-20000} --dest=org.bluez $path $method "$@"; }
if ! wait_until 300 has /org/bluez/hci1 org.bluez.Adapter1 Address; then
  say diag $(dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ListNames 2>&1 | tr -s ' \n' ' ') $(ls /sys/class/bluetooth)
  fail "bluetoothd did not export hci1 within 30 s"
fi
C=$(get /org/bluez/hci0 org.bluez.Adapter1 Address)
H=$(get /org/bluez/hci1 org.bluez.Adapter1 Address)
C_=$(echo $C | tr : _); H_=$(echo $H | tr : _)
CDEV=/org/bluez/hci0/dev_$H_   # the headset, as the computer sees it
HDEV=/org/bluez/hci1/dev_$C_   # the computer, as the headset sees it
say addresses computer $C headset $H
if [ $BT_COMPUTER = bluealsa ]; then bluealsa -i hci0 -p a2dp-source -p hfp-ag > /run/bluealsa-src.log 2>&1 & fi
# The headset: BlueALSA on hci1, and what it hears played into the ear's files. With PipeWire on
# the computer's side, the headset's BlueALSA runs as its own user, `headset`: the bus refuses
# root (PipeWire) hci1's Media1 (the image's bluetooth.conf: bluetooth/image.py), so that
# PipeWire's A2DP endpoints stay off the headset's controller; bluetooth-pipewire.conf lets
# `headset` in.
if [ $BT_COMPUTER = bluealsa ]; then
  bluealsa -B sink -i hci1 -p a2dp-sink -p hfp-hf > /run/bluealsa-sink.log 2>&1 &
else
  su -s /bin/sh headset -c 'exec bluealsa -B sink -i hci1 -p a2dp-sink -p hfp-hf' > /run/bluealsa-sink.log 2>&1 &
fi
SINK_BLUEALSA=$!
HOME=/root bluealsa-aplay -B sink -D ear > /run/ear.log 2>&1 &
/usr/bin/guest-ear /run/ear-48000-2.raw /run/ear-44100-2.raw /run/ear-16000-1.raw /run/ear-8000-1.raw > /dev/ttyS0 &
for a in hci0 hci1; do set_prop /org/bluez/$a org.bluez.Adapter1 Powered boolean:true || fail "could not power $a on"; done
set_prop /org/bluez/hci1 org.bluez.Adapter1 Discoverable boolean:true
set_prop /org/bluez/hci1 org.bluez.Adapter1 Pairable boolean:true
