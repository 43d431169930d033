# The guest's init, part 3 for scripts/test-real-kernel: its phases, each its own script of
# bench/guest/kernel/ (in the initramfs at PHASES), sourced in this order so that they share the
# boot's and the session's functions and variables, and these. The host fills in the names
# between at-signs (guest_init).
PHASES=@PHASES@
UCM_ROOT=@UCM_ROOT@
CAPTURE_SLOT=@CAPTURE_SLOT@
# The route file the surround and capture phases read.
ROUTE_FILE=/run/user/0/audioroute/asound.conf
# The daemon asks its UCM helper about every card, with the system's UCM tree (alsa-ucm-conf, all
# of /usr/share/alsa in the initramfs) as on a Debian machine: the host reports what it answered.
say stock-ucm $(ls /usr/share/alsa/ucm2/ucm.conf /usr/share/alsa/ucm2/conf.d/HDA-Intel/HDA-Intel.conf /usr/share/alsa/ucm2/conf.d/USB-Audio/USB-Audio.conf 2>&1 | tr '\n' ' ')
# The daemon's and its UCM helper's memory (kB), from /proc/PID/status.
memory() {
  for p in $DAEMON $(pidof audioroute-ucm); do
    echo "$(cat /proc/$p/comm)[$p]$(awk '/^(VmRSS|VmHWM|RssAnon):/ { sub(":", "", $1); printf ",%s=%s", $1, $2 }' /proc/$p/status)"
  done
}
say daemon-memory-start $(memory)
# The last frames the HDA card played before its stream stopped (up to 1562 seen) stay in QEMU's
# buffers until the card runs again: 0.2 s of silence straight to the card's dmix (no session) pushes
# them into its file, so that the host finds the old card's last frame within the cycle.
flush_hda() { aplay -q -t raw -f S16_LE -c 2 -r 48000 -s 9600 -D dmix:CARD=Intel,DEV=$HDA_PCM /dev/zero > /run/flush.log 2>&1 || fail "the silence that flushes the HDA card failed: $(tr '\n' '|' < /run/flush.log)"; }
. $PHASES/cycles.sh
. $PHASES/plugin.sh
. $PHASES/jack.sh
. $PHASES/sync.sh
. $PHASES/hardware.sh
. $PHASES/surround.sh
. $PHASES/capture.sh
. $PHASES/multiroute.sh
. $PHASES/tower.sh
. $PHASES/ucm.sh
. $PHASES/lost.sh
finish
