# The kernel bench's jack phase, its guest part (its checks: bench/realkernel/jack.py); sourced by
# kernel-checks.sh, after the phases before it.
# A headphone jack on the HDA card, read from the card's ALSA controls: QEMU's codec has only
# phantom jacks, so the guest adds a user control named as the kernel names jack controls.
# A port whose jack reads unplugged is listed, unavailable: only an available one counts.
has_headphones() { audioroute ports --json 2>/dev/null | tr '}' '\n' | grep '"headphones"' | grep -vq '"availability": "unavailable"'; }
if [ -n "$JACK" ]; then
  guest-jack 0 "Headphone Jack" add > /run/jack.log 2>&1 || fail "could not add a Headphone Jack control to card0: $(cat /run/jack.log)"
  sleep 1
  has_headphones && fail "a Headphone Jack control that is off gave a headphones port"
  guest-jack 0 "Headphone Jack" on || fail "could not switch the Headphone Jack control on"
  # Each check starts `audioroute ports` (about half a second in this guest): 30 checks.
  wait_until 30 has_headphones || fail "no headphones port 30 checks after the Headphone Jack control went on"
  say jack-on $(audioroute ports --json 2>&1 | tr -d '\n')
  guest-jack 0 "Headphone Jack" off || fail "could not switch the Headphone Jack control off"
  wait_until 30 eval '! has_headphones' || fail "the headphones port stayed 30 checks after the Headphone Jack control went off"
  say jack-off $(audioroute ports --json 2>&1 | tr -d '\n')
fi
