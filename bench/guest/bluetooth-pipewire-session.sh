# The Bluetooth bench's init with --server pipewire, after bluetooth.sh and server.sh: the user's
# session is PipeWire, WirePlumber and pipewire-pulse with SPA's bluez5 (the computer's side of
# Bluetooth: no BlueALSA on hci0), then audiorouted, which starts audioroute-pipewire.
MORE_LOGS="$MORE_LOGS /run/syslog.log /run/btsignals.log /run/agent.log /run/bluealsa-sink*.log /run/ear.log /run/btvirt.log /run/pw-*.log /run/wireplumber-start.log"
# WirePlumber 0.4.13's Bluetooth monitor as Debian ships it, with two settings of the user's own
# (~/.config/wireplumber/bluetooth.lua.d, read after the shipped 50-bluez-config.lua):
# - with-logind off: its logind module needs systemd-logind, which the guest has not (without the
#   setting WirePlumber exits: docs/lab-notes.md);
# - headset roles: hfp_ag only (the shipped default also has hsp_hs, a headset role: the
#   computer would offer itself as a headset to the headset's side, whose BlueALSA is HFP-HF).
# Its policy's switch to the headset profile for a recording stream (policy-bluetooth.lua,
# media-role.use-headset-profile) is left as shipped: the phase reports what it does.
mkdir -p /root/.config/wireplumber/bluetooth.lua.d /root/.config/wireplumber/main.lua.d
cat > /root/.config/wireplumber/bluetooth.lua.d/51-audioroute-bench.lua <<'LUA'
bluez_monitor.properties["with-logind"] = false
bluez_monitor.properties["bluez5.headset-roles"] = "[ hfp_ag ]"
LUA
echo 'device_defaults.properties["default-volume"] = 1.0' > /root/.config/wireplumber/main.lua.d/41-audioroute-bench-volume.lua
start_servers
watch_server
start_daemon
tail -f /run/daemon.log /run/monitor.log /run/wireplumber-start.log > /dev/ttyS1 2>&1 &
say ports $(audioroute ports --json 2>&1 | tr -d '\n')
