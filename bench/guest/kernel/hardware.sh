# The kernel bench's hardware phase, its guest part (its checks: bench/realkernel/hardware.py); sourced
# by kernel-checks.sh, after the phases before it.
# The route's hardware as a session reads it (`audioroute hardware`, which opens the route's device
# itself), with the card idle, then while a stream plays on it through the plugin: the host checks
# both against the card's own hw_params in /proc, which the kernel fills while it is open. First the
# HDA card (the speaker's route), then the USB card, which the host hot-adds on hardware-usb-ready
# and removes on hardware-usb-done.
# The card's playback element the session reads, chosen here by amixer on its own (the same order:
# Master, PCM, Speaker, Headphone, else the first simple control with a playback volume).
mixer_element() {
    { printf '%s\n' Master PCM Speaker Headphone; amixer -c $1 scontrols | sed -n "s/^Simple mixer control '\(.*\)',0$/\1/p"; } |
        while read -r element; do
            amixer -c $1 sget "$element" 2>/dev/null | grep -q 'Capabilities:.* \(pvolume\|volume\)' && { echo "$element"; break; }
        done
}
# `ELEMENT|SGET|CGET`: the element as amixer shows it (its raw limits, each channel's raw value and
# dB) and its volume control's TLV (cget's dB scale), lines joined by `|`; the host computes
# alsamixer's perceptual value from them.
mixer_line() {
    echo "$2|$(amixer -c $1 sget "$2" 2>&1 | tr '\n' '|')$( (amixer -c $1 cget name="$2 Playback Volume" || amixer -c $1 cget name="$2 Volume") 2>&1 | tr '\n' '|')"
}
# The card's element (found by mixer_element), its mixer stored, then set by amixer to the middle
# of its raw range (the host computes what that is from the range); `mixer_restore` puts it back
# for the phases after.
mixer_half() {
    [ -n "$2" ] || fail "hardware: amixer finds no playback volume on card $1: $(amixer -c $1 scontrols 2>&1 | tr '\n' '|')"
    alsactl -f /run/hardware-mixer.state store $1 || fail "hardware: alsactl store $1 failed"
    amixer -q -c $1 sset "$2" 50% || fail "hardware: amixer sset '$2' 50% on card $1 failed"
}
mixer_restore() { alsactl -f /run/hardware-mixer.state restore $1 || fail "hardware: alsactl restore $1 failed"; }
say hardware-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
say hardware-idle $(audioroute hardware --json 2>&1 | tr -d '\n')
HARDWARE_ELEMENT=$(mixer_element Intel)
say hardware-mixer "$(mixer_line Intel "$HARDWARE_ELEMENT")"
mixer_half Intel "$HARDWARE_ELEMENT"
say hardware-mixer-set "$(mixer_line Intel "$HARDWARE_ELEMENT")"
say hardware-set $(audioroute hardware --json 2>&1 | tr -d '\n')
mixer_restore Intel
aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 -d 3 /dev/zero > /run/aplay-hardware.log 2>&1 &
HARDWARE_PLAY=$!
sleep 1.5
say hardware-card "$(tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params)"
say hardware-open $(audioroute hardware --json 2>&1 | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay -D audioroute on the HDA card failed: $(tr '\n' '|' < /run/aplay-hardware.log)"
# The card's stream is open (its hw_params filled) within 5 s, and a moment more has played.
card_playing() { wait_until 50 grep -q '^rate' /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params && sleep 0.5; }
# The session's values on an exclusive device, and its I/O buffer through the plugin, at 48 kHz only
# (docs/lab-notes.md): every route the daemon writes on this bench is a dmix, so a route file of the
# step's own names the HDA card's hw device, read by `audioroute hardware` through XDG_RUNTIME_DIR and
# by the plugin through a definition of its own (route_file, bus none) in HOME; the daemon's route
# file is not touched, so the phases after are unchanged.
mkdir -p /run/hwbusy/audioroute
echo "pcm.!audioroute_route { type plug slave.pcm \"hw:CARD=Intel,DEV=$HDA_PCM\" }" > /run/hwbusy/audioroute/asound.conf
echo 'pcm.hwbusy_route { type audioroute route_file "/run/hwbusy/audioroute/asound.conf" bus "none" }' > /run/hwbusy/.asoundrc
# A busy device: read idle (a fresh process: what the device gives), then from a fresh process while
# aplay holds the hw device (EBUSY): that process read it never, so it has no last values: 0.
say hardware-busy-idle $(XDG_RUNTIME_DIR=/run/hwbusy audioroute hardware --json 2>&1 | tr -d '\n')
aplay -q -D hw:CARD=Intel,DEV=$HDA_PCM -t raw -f S16_LE -c 2 -r 48000 -d 3 /dev/zero > /run/aplay-busy.log 2>&1 &
HARDWARE_PLAY=$!
card_playing || fail "hardware: the HDA card is not open 5 s after aplay started on its hw device: $(tr '\n' '|' < /run/aplay-busy.log)"
say hardware-busy-card "$(tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params)"
# Its standard output only: libasound may say the failed open on standard error.
say hardware-busy-open $(XDG_RUNTIME_DIR=/run/hwbusy audioroute hardware --json 2> /run/hardware-busy.err | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay on the HDA card's hw device failed: $(tr '\n' '|' < /run/aplay-busy.log)"
# The I/O buffer: 3 s through the plugin on the hw device (aplay's own periods 100 ms, its buffer
# 400 ms), without AUDIOROUTE_IO_BUFFER_DURATION (`default`) and with 5000 µs (`5ms`, what
# setPreferredIOBufferDuration(0.005) sets): the kernel's hw_params while it plays, then the plugin's
# trace of its pieces and aplay's own setup (-v).
# io_pieces WHAT [MICROSECONDS]: that stream; the card's hw_params while it plays in /run/io-card,
# its standard error in /run/aplay-io.log; io_log: the lines of it the host reads, joined by `|`.
io_pieces() {
    env ${2:+AUDIOROUTE_IO_BUFFER_DURATION=$2} HOME=/run/hwbusy AUDIOROUTE_DEBUG=1 aplay -v -D hwbusy_route -t raw -f S16_LE -c 2 -r 48000 \
        --period-size=4800 --buffer-size=19200 -d 3 /dev/zero > /run/aplay-io.log 2>&1 &
    HARDWARE_PLAY=$!
    card_playing || fail "hardware: the HDA card is not open 5 s after aplay ($1 I/O buffer) started through the plugin on its hw device: $(tr '\n' '|' < /run/aplay-io.log)"
    tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params > /run/io-card
    wait $HARDWARE_PLAY || fail "hardware: aplay ($1 I/O buffer) through the plugin on the HDA card's hw device failed: $(tr '\n' '|' < /run/aplay-io.log)"
}
io_log() { grep 'pieces of\|period_size\|buffer_size\|AUDIOROUTE_IO\|rate  ' /run/aplay-io.log | tr '\n' '|'; }
io_pieces default
say hardware-io-default-card "$(cat /run/io-card)"
say hardware-io-default-done "$(io_log)"
io_pieces 5ms 5000
say hardware-io-5ms-card "$(cat /run/io-card)"
say hardware-io-5ms-done "$(io_log)"
# The session's preferred rate (AUDIOROUTE_PREFERRED_SAMPLE_RATE, as setPreferredSampleRate sets it)
# meets the card's dmix, which runs at its own rate: the 48 kHz music through the plugin with
# 44.1 kHz preferred plays at dmix's rate, said on standard error, and `audioroute hardware --rate
# 44100` says that rate. (Not on the card's hw device at 44.1 kHz: QEMU's HDA codec then plays the
# 48 kHz streams after it off pitch, docs/lab-notes.md.)
say hardware-rate-ready
AUDIOROUTE_PREFERRED_SAMPLE_RATE=44100 AUDIOROUTE_DEBUG=1 aplay -q -D audioroute -d 3 /root/music.wav > /run/aplay-rate-dmix.log 2>&1 &
HARDWARE_PLAY=$!
card_playing || fail "hardware: the HDA card is not open 5 s after aplay at the preferred 44100 Hz started on its dmix: $(tr '\n' '|' < /run/aplay-rate-dmix.log)"
say hardware-rate-dmix-card "$(tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params)"
say hardware-rate-dmix-open $(audioroute hardware --rate 44100 --json 2>&1 | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay at the preferred 44100 Hz on the HDA card's dmix failed: $(tr '\n' '|' < /run/aplay-rate-dmix.log)"
say hardware-rate-dmix-done "$(grep -v 'pieces of\|underrun' /run/aplay-rate-dmix.log | tail -20 | tr '\n' '|')"
say hardware-usb-ready
wait_until 600 initialized card1 || fail "hardware: no SOUND_INITIALIZED card1 within 60 s of hardware-usb-ready"
wait_until 300 eval '! grep slave.pcm $ROUTE_FILE | head -1 | grep -q Intel' || fail "hardware: the route's output is still the HDA card 30 s after card1: $(tr '\n' '|' < $ROUTE_FILE)"
say hardware-usb-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
say hardware-usb-idle $(audioroute hardware --json 2>&1 | tr -d '\n')
HARDWARE_ELEMENT=$(mixer_element 1)
say hardware-usb-mixer "$(mixer_line 1 "$HARDWARE_ELEMENT")"
mixer_half 1 "$HARDWARE_ELEMENT"
say hardware-usb-mixer-set "$(mixer_line 1 "$HARDWARE_ELEMENT")"
say hardware-usb-set $(audioroute hardware --json 2>&1 | tr -d '\n')
mixer_restore 1
aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 -d 3 /dev/zero > /run/aplay-hardware-usb.log 2>&1 &
HARDWARE_PLAY=$!
sleep 1.5
say hardware-usb-card "$(tr '\n' '|' < /proc/asound/card1/pcm0p/sub0/hw_params)"
say hardware-usb-open $(audioroute hardware --json 2>&1 | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay -D audioroute on the USB card failed: $(tr '\n' '|' < /run/aplay-hardware-usb.log)"
HARDWARE_PLAY=
say hardware-usb-done
wait_until 600 gone card1 || fail "hardware: card1 still there 60 s after hardware-usb-done"
wait_until 300 eval 'grep slave.pcm $ROUTE_FILE | head -1 | grep -q Intel' || fail "hardware: the route's output is not the HDA card again 30 s after card1 left"
