# The Bluetooth bench's bluetoothd restart phase: sourced by bluetooth-checks.sh, checked by bench/realkernel/bluetooth/restart.py.
# bluetoothd restarted: the headset's ports go, and come back once it is connected again; the
# daemon lives on.
say btd-stop
kill $BLUETOOTHD; wait $BLUETOOTHD 2>/dev/null
wait_until 100 no_headset_ports || fail "the headset's ports stayed 10 s after bluetoothd stopped"
say btd-stopped $(audioroute ports --json 2>&1 | tr -d '\n')
/usr/libexec/bluetooth/bluetoothd -n > /run/bluetoothd-2.log 2>&1 &
BLUETOOTHD=$!
wait_until 300 is /org/bluez/hci0 org.bluez.Adapter1 Powered true || fail "hci0 is not powered 30 s after bluetoothd restarted"
# The new bluetoothd knows the headset only from its storage, as dual-mode (btvirt's controllers
# are BR/EDR and LE): Connect tries LE and hangs, and everything else is then "already in
# progress". Finding the headset again by discovery (its BR/EDR inquiry result) makes Connect use
# BR/EDR, as it did before the restart.
call $CDEV org.bluez.Device1.Disconnect > /dev/null 2>&1
kill $AGENT 2>/dev/null
guest-agent /org/bluez/hci0 $H > /run/agent-2.log 2>&1 &
AGENT=$!
wait_until 300 grep -q "agent discovered" /run/agent-2.log || fail "after the restart, hci0 did not find the headset again: $(tr '\n' '|' < /run/agent-2.log)"
connect restart || fail "after bluetoothd restarted: Connect failed twice: $(cat /run/connect.log)"
wait_until 30 eval '! no_headset_ports' || fail "the headset's ports did not come back 20 s after Connect"
hfp_up restart  # HFP's can come later, or not at all (see the cycles)
say btd-back $(audioroute ports --json 2>&1 | tr -d '\n')
say daemon-after $(audioroute status >/dev/null 2>&1 && echo alive || echo dead)
