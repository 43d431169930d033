# The kernel bench's hardware phase, its guest part (its checks: bench/realkernel/hardware.py); sourced
# by kernel-checks.sh, after the phases before it.
# The route's hardware as a session reads it (`audioroute hardware`, which opens the route's device
# itself), with the card idle, then while a stream plays on it through the plugin: the host checks
# both against the card's own hw_params in /proc, which the kernel fills while it is open. First the
# HDA card (the speaker's route), then the USB card, which the host hot-adds on hardware-usb-ready
# and removes on hardware-usb-done.
say hardware-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
say hardware-idle $(audioroute hardware --json 2>&1 | tr -d '\n')
aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 -d 3 /dev/zero > /run/aplay-hardware.log 2>&1 &
HARDWARE_PLAY=$!
sleep 1.5
say hardware-card "$(tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params)"
say hardware-open $(audioroute hardware --json 2>&1 | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay -D audioroute on the HDA card failed: $(tr '\n' '|' < /run/aplay-hardware.log)"
say hardware-usb-ready
wait_until 600 initialized card1 || fail "hardware: no SOUND_INITIALIZED card1 within 60 s of hardware-usb-ready"
wait_until 300 eval '! grep slave.pcm $ROUTE_FILE | head -1 | grep -q Intel' || fail "hardware: the route's output is still the HDA card 30 s after card1: $(tr '\n' '|' < $ROUTE_FILE)"
say hardware-usb-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
say hardware-usb-idle $(audioroute hardware --json 2>&1 | tr -d '\n')
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
