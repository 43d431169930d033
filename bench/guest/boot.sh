#!/bin/busybox sh
# The guest's init, part 1: the boot, up to the HDA card, ready (shared by both benches).
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs run /run
# /var/lock: alsactl's lock file, without which udev's alsa-restore rule leaves the card muted.
mkdir -p /tmp /run/udev /var/lock /var/lib/alsa
say() { echo "AUDIOROUTE-GUEST $*" > /dev/ttyS0; }
fail() { say fail "$*"; finish; }
# Waits up to $1 tenths of a second for the command after it to succeed.
wait_until() { local limit=$1 i=0; shift; until "$@"; do i=$((i + 1)); [ $i -gt $limit ] && return 1; sleep 0.1; done; }
initialized() { udevadm info -q property -p /class/sound/$1 2>/dev/null | grep -q '^SOUND_INITIALIZED=1'; }
gone() { [ ! -e /sys/class/sound/$1 ]; }
count_at_least() { [ "$(grep -c "$2" "$3" 2>/dev/null)" -ge "$1" ]; }
# Whether a process is still there, as the checks report it.
alive() { kill -0 $1 2>/dev/null && echo alive || echo exited; }
# Stops an app as a user does, with SIGTERM; one that outlives it by 5 s is said (`stuck NAME`,
# with where it sits) and killed, so that an app that cannot be stopped fails the run by name
# rather than hanging it.
stop() {
  kill -TERM $1 2>/dev/null
  i=0
  while kill -0 $1 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  if kill -0 $1 2>/dev/null; then
    say stuck $2 "$(cat /proc/$1/wchan 2>/dev/null)" "$(cut -d' ' -f1-3 /proc/$1/syscall 2>/dev/null)" "$(grep SigBlk /proc/$1/status 2>/dev/null)"
    kill -KILL $1 2>/dev/null
  fi
  wait $1 2>/dev/null
}
# Everything the host needs from the guest goes out on the console before the power-off.
finish() {
  for p in $PLAYER $MUSIC $OTHER $READER; do kill -TERM $p 2>/dev/null; done
  grep -E '^(KERNEL|UDEV)|^SOUND_INITIALIZED=' /run/uevents.raw > /run/uevents.log
  for log in /run/uevents.log /run/monitor.log /run/daemon.log /run/aplay-*.log $MORE_LOGS; do
    [ -e "$log" ] || continue
    while read -r line; do say log $(basename $log .log) "$line"; done < $log
  done
  say end
  poweroff -f
}
say boot $(cut -d' ' -f1 /proc/uptime)
# The kernel's messages go to the log port: on the console they would cut the reports' lines
# (the console shows only warnings and worse, loglevel=4).
cat /proc/kmsg > /dev/ttyS1 &
/lib/systemd/systemd-udevd --daemon 2>/run/udevd.log
# Every sound uevent, the kernel's and udev's, stamped with CLOCK_MONOTONIC by udevadm.
udevadm monitor --kernel --udev --property --subsystem-match=sound > /run/uevents.raw 2>&1 &
udevadm trigger --action=add --type=subsystems
udevadm trigger --action=add --type=devices
udevadm settle --timeout=60 || say settle-timeout
say settled $(cut -d' ' -f1 /proc/uptime)
# The HDA controller probes its codecs asynchronously, after udev has settled: the card and
# its PCMs come later, then udev's SOUND_INITIALIZED. Wait for that, as PipeWire does.
wait_until 600 initialized card0 || fail "the HDA card was not SOUND_INITIALIZED within 60 s"
say card0 $(cut -d' ' -f1 /proc/uptime)
# A fresh HDA card's mixer is muted (Master at 0, switched off). Debian's 90-alsa-restore.rules
# runs `alsactl restore`, which falls back to alsactl's init when there is no saved state, as on
# a first boot: that needs /var/lock for alsactl's lock file (made above).
if [ -n "$AUDIOROUTE_DEBUG" ]; then alsactl -f /run/asound.state store 0; grep -E "name|value|iface" /run/asound.state > /dev/ttyS0; lsmod > /dev/ttyS0; ls -l /dev/input /dev/snd > /dev/ttyS0; tail -5 /run/udevd.log > /dev/ttyS0; fi
while read -r line; do say card "$line"; done < /proc/asound/cards
for card in /sys/class/sound/card*; do
  [ -e "$card" ] || continue
  say udev $(basename $card) $(udevadm info -q property -p $card | grep -E '^(SOUND_INITIALIZED|ID_PATH|ID_MODEL_FROM_DATABASE)=' | tr '\n' ' ')
done
for pcm in /dev/snd/pcm*; do [ -e "$pcm" ] && say pcm $(basename $pcm); done
