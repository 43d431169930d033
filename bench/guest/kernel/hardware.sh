# The kernel bench's hardware phase, its guest part (its checks: bench/realkernel/hardware.py); sourced
# by kernel-checks.sh, after the phases before it.
# The route's hardware as a session reads it (`audioroute hardware`, which opens the route's device
# itself), with the HDA card idle, then while a stream plays on it through the plugin: the host
# checks both against the card's own hw_params in /proc, which the kernel fills while it is open.
say hardware-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
say hardware-idle $(audioroute hardware --json 2>&1 | tr -d '\n')
aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 -d 3 /dev/zero > /run/aplay-hardware.log 2>&1 &
HARDWARE_PLAY=$!
sleep 1.5
say hardware-card "$(tr '\n' '|' < /proc/asound/Intel/pcm${HDA_PCM}p/sub0/hw_params)"
say hardware-open $(audioroute hardware --json 2>&1 | tr -d '\n')
wait $HARDWARE_PLAY || fail "hardware: aplay -D audioroute failed: $(tr '\n' '|' < /run/aplay-hardware.log)"
HARDWARE_PLAY=
