# The guest's init, part 3 for scripts/test-real-kernel: its phases. The host fills in the names
# between at-signs: UCM_ROOT and CAPTURE_SLOT (guest_init).
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
# The cycles. Each: a fresh `audioroute play` on the HDA card; the host hot-adds the USB card
# (QMP device_add) when the guest says ready, and removes it when the guest says added. The
# player plays the plugin cycles' signal, so that the host places its frames on each card.
n=1
while [ $n -le $CYCLES ]; do
  # AUDIOROUTE_DEBUG: the player's mover (the plugin's, in its process) traces the move, timed,
  # on standard error, to split the gap as the plugin's is.
  AUDIOROUTE_DEBUG=1 audioroute play /root/signal.wav > /run/play-$n.log 2> /run/play-trace-$n.log &
  PLAYER=$!
  wait_until 100 grep -q playing /run/play-$n.log || fail "cycle $n: audioroute play did not start"
  sleep 1
  say ready $n
  wait_until 600 initialized card1 || fail "cycle $n: no SOUND_INITIALIZED card1 within 60 s of ready"
  wait_until 300 count_at_least $n newDeviceAvailable /run/monitor.log || fail "cycle $n: no newDeviceAvailable within 30 s"
  wait_until 300 grep -q "USB Audio  playing" /run/play-$n.log || fail "cycle $n: the player did not say it plays on the USB card"
  sleep 1.5
  flush_hda
  say added $n $(audioroute ports --json 2>&1 | tr -d '\n')
  wait_until 600 gone card1 || fail "cycle $n: card1 still there 60 s after added"
  wait_until 300 count_at_least $n oldDeviceUnavailable /run/monitor.log || fail "cycle $n: no oldDeviceUnavailable within 30 s"
  sleep 1.5
  say removed $n $(audioroute ports --json 2>&1 | tr -d '\n')
  if kill -0 $PLAYER 2>/dev/null; then say player $n running $(tail -1 /run/play-$n.log); kill -TERM $PLAYER; wait $PLAYER
  else wait $PLAYER; say player $n exited $? $(tail -3 /run/play-$n.log | tr '\n' '|') $(grep -v '^audioroute [0-9]' /run/play-trace-$n.log | tail -3 | tr '\n' '|'); fi
  grep '^audioroute [0-9]' /run/play-trace-$n.log | while read -r line; do say player-trace $n "$line"; done
  say player-trace-end $n
  PLAYER=
  n=$((n + 1))
done
# The first daemon after the cycles (as at its start): no card has a profile in the system's tree,
# so no helper runs.
say daemon-memory $(memory)
# The plugin's cycles: a plain `aplay -D audioroute` (the ALSA plugin) of a signal the host can
# place frame by frame, started on the HDA card; the host hot-adds, then removes, the USB card.
# The same aplay runs through the whole cycle: it is never restarted.
if [ -n "$PLUGIN" ]; then
  m=1
  while [ $m -le $CYCLES ]; do
    k=$((CYCLES + m))
    # AUDIOROUTE_DEBUG: the plugin's trace of the move, timed, to split the gap.
    AUDIOROUTE_DEBUG=1 aplay -q -D audioroute /root/signal.wav > /run/aplay-follow-$m.log 2>&1 &
    PLAYER=$!
    sleep 1.5
    kill -0 $PLAYER 2>/dev/null || fail "plugin cycle $m: aplay -D audioroute exited at once: $(tr '\n' '|' < /run/aplay-follow-$m.log)"
    say plugin-ready $m $PLAYER
    say plugin-sessions-ready $m $(audioroute status --json 2>&1 | tr -d '\n')
    wait_until 600 initialized card1 || fail "plugin cycle $m: no SOUND_INITIALIZED card1 within 60 s of plugin-ready"
    wait_until 300 count_at_least $k newDeviceAvailable /run/monitor.log || fail "plugin cycle $m: no newDeviceAvailable within 30 s"
    sleep 2
    flush_hda
    say plugin-added $m $(alive $PLAYER)
    say plugin-sessions-added $m $(audioroute status --json 2>&1 | tr -d '\n')
    wait_until 600 gone card1 || fail "plugin cycle $m: card1 still there 60 s after plugin-added"
    wait_until 300 count_at_least $k oldDeviceUnavailable /run/monitor.log || fail "plugin cycle $m: no oldDeviceUnavailable within 30 s"
    sleep 2
    say plugin-removed $m $(alive $PLAYER)
    say plugin-sessions-removed $m $(audioroute status --json 2>&1 | tr -d '\n')
    if [ $m -eq $CYCLES ]; then
      # The card comes back under the held aplay: it goes on there by itself (an unplug's hold
      # lifts when the route names the device it was held from again), its session active again.
      say plugin-replug-ready $m
      wait_until 600 initialized card1 || fail "plugin re-plug: no SOUND_INITIALIZED card1 within 60 s of plugin-replug-ready"
      wait_until 300 count_at_least $((k + 1)) newDeviceAvailable /run/monitor.log || fail "plugin re-plug: no newDeviceAvailable within 30 s"
      sleep 2
      say plugin-replugged $m $(alive $PLAYER)
      say plugin-sessions-replugged $m $(audioroute status --json 2>&1 | tr -d '\n')
      wait_until 600 gone card1 || fail "plugin re-plug: card1 still there 60 s after plugin-replugged"
      wait_until 300 count_at_least $((k + 1)) oldDeviceUnavailable /run/monitor.log || fail "plugin re-plug: no oldDeviceUnavailable within 30 s"
      sleep 1
      say plugin-replug-removed $m $(alive $PLAYER)
    fi
    stop $PLAYER "plugin-cycle-$m"
    while read -r line; do say plugin-trace $m "$line"; done < /run/aplay-follow-$m.log
    say plugin-trace-end $m
    PLAYER=
    m=$((m + 1))
  done
fi
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
# A second, multichannel USB card (QEMU's usb-audio with multi=on: stereo, 5.1 and 7.1 altsets),
# hot-plugged by the host on surround-ready: its output port is dmix at the card's channels, and
# a 6-channel stream and then a stereo one reach it through the plugin; the host reads the card's
# own WAV file.
ROUTE_FILE=/run/user/0/audioroute/asound.conf
if [ -n "$SURROUND" ]; then
  say surround-ready
  wait_until 600 initialized card1 || fail "surround: no SOUND_INITIALIZED card1 within 60 s of surround-ready"
  wait_until 300 grep -q 'CHANNELS=' $ROUTE_FILE || fail "surround: the route's output is not dmix with CHANNELS 30 s after card1: $(tr '\n' '|' < $ROUTE_FILE)"
  say surround-added "$(tr '\n' '|' < /proc/asound/card1/stream0)"
  say surround-ports $(audioroute ports --json 2>&1 | tr -d '\n')
  say surround-explain "$(audioroute ports --direct --explain 2>/dev/null | grep -E 'usb stream|channels \(' | tr '\n' '|')"
  say surround-route "$(grep slave.pcm $ROUTE_FILE | head -1)"
  say surround-chmaps "$(chmap-probe audioroute 6 2>&1 | tr '\n' '|')" "$(chmap-probe audioroute 2 2>&1 | tr '\n' '|')"
  aplay -q -D audioroute /root/surround-six.wav > /run/aplay-surround-six.log 2>&1 || fail "surround: aplay -D audioroute of the 6-channel stream failed: $(tr '\n' '|' < /run/aplay-surround-six.log)"
  sleep 1
  say surround-six
  aplay -q -D audioroute /root/surround-stereo.wav > /run/aplay-surround-stereo.log 2>&1 || fail "surround: aplay -D audioroute of the stereo stream failed: $(tr '\n' '|' < /run/aplay-surround-stereo.log)"
  sleep 1
  say surround-stereo
  wait_until 600 gone card1 || fail "surround: card1 still there 60 s after surround-stereo"
  wait_until 300 eval '! grep -q CHANNELS= $ROUTE_FILE' || fail "surround: the route still names CHANNELS 30 s after card1 left"
  say surround-removed $(audioroute ports --json 2>&1 | tr -d '\n')
fi
# Capture: two readers of the route's input through the plugin at once, while the host hot-adds
# the output-only USB card and removes it: a playAndRecord session, which controls the route (its
# output moves to the USB card and back, its input stays the mic), and a playAndRecord one with
# mixWithOthers, which does not interrupt it. A record session cannot be one of them: it is
# non-mixable, so it would interrupt the first or be interrupted by it (and an interrupted reader
# reads nothing), and controlling the route it has no output for the USB card to move. The mic
# records the host's signal file (mic_argv); the recordings go back on the virtio disk.
if [ -n "$CAPTURE" ]; then
  MORE_LOGS="$MORE_LOGS /run/capture-*.log"
  wait_until 100 test -b /dev/vda || fail "capture: no virtio disk /dev/vda for the recordings"
  NEW=$(grep -c newDeviceAvailable /run/monitor.log); OLD=$(grep -c oldDeviceUnavailable /run/monitor.log)
  aplay -C -q -D audioroute_capture:CATEGORY=playAndRecord -f S16_LE -c 2 -r 48000 -t raw /run/capture-call.raw > /run/capture-call.log 2>&1 &
  READER=$!
  aplay -C -q -D audioroute_capture:CATEGORY=playAndRecord,OPTIONS=mixWithOthers -f S16_LE -c 2 -r 48000 -t raw /run/capture-mix.raw > /run/capture-mix.log 2>&1 &
  OTHER=$!
  sleep 1.5
  # What the readers open: the route file's input PCM, and the card's capture PCMs in use (the
  # kernel's hw_params: one hardware stream, shared).
  say capture-route "$(grep -A4 "audioroute_route_capture" $ROUTE_FILE | tr '\n' '|')"
  say capture-hw "$(for f in /proc/asound/card0/pcm*c/sub*/status; do echo "$f: $(head -1 $f)"; done | tr '\n' '|')"
  say capture-ready $(cut -d' ' -f1 /proc/uptime) $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  wait_until 600 initialized card1 || fail "capture: no SOUND_INITIALIZED card1 within 60 s of capture-ready"
  wait_until 300 count_at_least $((NEW + 1)) newDeviceAvailable /run/monitor.log || fail "capture: no newDeviceAvailable within 30 s"
  sleep 1.5
  say capture-added $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  wait_until 600 gone card1 || fail "capture: card1 still there 60 s after capture-added"
  wait_until 300 count_at_least $((OLD + 1)) oldDeviceUnavailable /run/monitor.log || fail "capture: no oldDeviceUnavailable within 30 s"
  sleep 1.5
  say capture-removed $(cut -d' ' -f1 /proc/uptime) $(alive $READER) $(alive $OTHER) $(audioroute status --json 2>&1 | tr -d '\n')
  kill -TERM $READER $OTHER 2>/dev/null; wait $READER; a=$?; wait $OTHER; b=$?; READER=; OTHER=
  dd if=/run/capture-call.raw of=/dev/vda bs=1M conv=fsync > /run/capture-dd.log 2>&1 \
    && dd if=/run/capture-mix.raw of=/dev/vda bs=1M seek=$((@CAPTURE_SLOT@ >> 20)) conv=fsync >> /run/capture-dd.log 2>&1 \
    || fail "capture: could not write the recordings to /dev/vda: $(tr '\n' '|' < /run/capture-dd.log)"
  say capture-done $a $b $(wc -c < /run/capture-call.raw) $(wc -c < /run/capture-mix.raw)
fi
# The tower's decisions on plain aplay streams (the plugin's sessions), all on the HDA card; the
# host reads each tone's level between the reports, in the HDA card's file.
if [ -n "$TOWER" ]; then
  # Ducking: music (500 Hz) and a duckOthers prompt (1250 Hz, 3.5 s) at once.
  aplay -q -D audioroute /root/music.wav > /run/aplay-duck-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say duck-before; sleep 1.5
  say duck-prompt
  aplay -q -D 'audioroute:CATEGORY=playback,OPTIONS=mixWithOthers+duckOthers' /root/prompt.wav > /run/aplay-duck-prompt.log 2>&1 &
  OTHER=$!
  wait $OTHER; status=$?; OTHER=
  sleep 1; say duck-after $status $(tail -2 /run/aplay-duck-prompt.log | tr '\n' '|'); sleep 1.5
  say duck-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
  # Silent mode: a soloAmbient stream (700 Hz) is silenced while aplay keeps running.
  aplay -q -D audioroute:CATEGORY=soloAmbient /root/ambient.wav > /run/aplay-silent.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say silent-before; sleep 1.5
  say silent-switch
  audioroute silent on > /run/silent.log 2>&1 || fail "audioroute silent on failed: $(cat /run/silent.log)"
  sleep 0.7; say silent-on; sleep 1.5
  say silent-on-end $(alive $MUSIC)
  audioroute silent off > /run/silent.log 2>&1 || fail "audioroute silent off failed: $(cat /run/silent.log)"
  sleep 0.7; say silent-off; sleep 1.5
  say silent-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
  # A call: music (500 Hz) is interrupted by a playAndRecord stream (900 Hz, 3.5 s), and resumes
  # when the call's aplay closes (its session deactivates with notifyOthers).
  aplay -q -D audioroute /root/music.wav > /run/aplay-call-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say call-before; sleep 1.5
  say call-start
  aplay -q -D audioroute:CATEGORY=playAndRecord /root/call.wav > /run/aplay-call.log 2>&1 &
  OTHER=$!
  sleep 1.5; say call-during $(alive $MUSIC)
  wait $OTHER; status=$?; OTHER=
  sleep 1.5; say call-after $status $(tail -2 /run/aplay-call.log | tr '\n' '|'); sleep 1.5
  say call-end $(alive $MUSIC)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
fi
# UCM (issue 19): the daemon restarted with the HDA card's UCM configuration written for the
# bench (Tests/Fixtures/ucm2-bench: Speaker = the Master amp's left channel, Earpiece = its right,
# the verb in its volume). Last, on its own daemon and monitor: the phases above read the first
# ones' logs. Music (mixable) plays throughout; a call comes, goes to the speaker and back, ends.
if [ -n "$UCM" ]; then
  kill -TERM $MONITOR 2>/dev/null; wait $MONITOR 2>/dev/null
  kill -TERM $DAEMON 2>/dev/null; wait $DAEMON 2>/dev/null
  # The codec stays powered: after it had suspended (power_save, 1 s idle), QEMU was seen
  # playing a new stream on both channels at full volume whatever the amp said, until the next
  # amp write (docs/ucm.md); with power_save 0 the file follows the controls.
  POWER_SAVE=$(cat /sys/module/snd_hda_intel/parameters/power_save)
  echo 0 > /sys/module/snd_hda_intel/parameters/power_save
  MORE_LOGS="$MORE_LOGS /run/alsaucm.log /run/daemon-ucm.log /run/monitor-ucm.log /run/controls-ucm.log /run/play-ucm-*.log /run/override-ucm.log /run/play-usb-ucm-*.log"
  switch() { amixer -c0 cget "name=Master Playback Switch" | sed -n 's/^ *: values=//p'; }
  volume() { amixer -c0 cget "name=Master Playback Volume" | sed -n 's/^ *: values=//p'; }
  capture() { amixer -c0 cget "name=Capture Switch" | sed -n 's/^ *: values=//p'; }
  controls() { echo switch=$(switch) volume=$(volume) capture=$(capture); }
  # The configuration alone, without the daemon: alsaucm sets each verb and device on the card's
  # own PCM (hw:Intel,2, its PlaybackPCM) while it plays; the host reads where the tone went.
  ucm() { ALSA_CONFIG_UCM2=@UCM_ROOT@ alsaucm -c hw:Intel "$@" >> /run/alsaucm.log 2>&1 || fail "UCM: alsaucm $*: $(tail -3 /run/alsaucm.log | tr '\n' '|')"; }
  aplay -q -D hw:Intel,$HDA_PCM /root/ucm-music.wav > /run/aplay-ucm.log 2>&1 &
  OTHER=$!
  sleep 1
  ucm set _verb HiFi set _enadev Speaker
  sleep 0.5; say ucm-config-speaker $(controls); sleep 1.5; say ucm-config-speaker-end
  ucm set _verb "Voice Call" set _enadev Earpiece set _enadev Mic
  sleep 0.5; say ucm-config-earpiece $(controls); sleep 1.5; say ucm-config-earpiece-end
  kill -TERM $OTHER 2>/dev/null; wait $OTHER 2>/dev/null; OTHER=
  # The daemon starts from a card with every device off (HiFi's sequence), watched from here on.
  ucm set _verb HiFi
  guest-controls 0 > /run/controls-ucm.log 2>&1 &
  WATCH=$!
  ALSA_CONFIG_UCM2=@UCM_ROOT@ audiorouted --state-dir /var/lib/audioroute --log-level info --ucm-root @UCM_ROOT@ 2>/run/daemon-ucm.log &
  DAEMON=$!
  : > /run/play-ucm-music.log; : > /run/play-ucm-call.log; : > /run/override-ucm.log
  tail -f /run/daemon-ucm.log /run/controls-ucm.log /run/play-ucm-music.log /run/play-ucm-call.log /run/override-ucm.log > /dev/ttyS1 2>&1 &
  answers() { audioroute status >/dev/null 2>&1 || ! kill -0 $DAEMON 2>/dev/null; }
  wait_until 300 answers
  kill -0 $DAEMON 2>/dev/null || fail "UCM: audiorouted --ucm-root exited: $(head -c 300 /run/daemon-ucm.log | tr '\n' '|')"
  audioroute status >/dev/null 2>&1 || fail "UCM: audiorouted --ucm-root did not answer within 30 s"
  {
    audioroute monitor --json --timestamps > /run/monitor-ucm.log 2>&1 &
    MONITOR=$!
    sleep 1
    say ucm-ports $(audioroute ports --json 2>&1 | tr -d '\n')
    switch_is() { [ "$(switch)" = "$1" ]; }
    # A step: the guest waits (up to 10 s) for the switch the step should give, then reports the
    # controls and the route; the host reads the WAV file from ucm-STEP to ucm-STEP-end.
    step() {
      wait_until 100 switch_is "$2"
      sleep 1
      say ucm-$1 $(controls) $(audioroute status --json 2>&1 | tr -d '\n')
      sleep 1.5
      say ucm-$1-end switch=$(switch)
    }
    audioroute play --options mixWithOthers --loops=-1 /root/ucm-music.wav > /run/play-ucm-music.log 2>&1 &
    MUSIC=$!
    step music on,off
    audioroute play --category playAndRecord --mode voiceChat --loops=-1 /root/ucm-call.wav > /run/play-ucm-call.log 2>&1 &
    PLAYER=$!
    step call off,on
    # The speaker override: the CLI's own playAndRecord session (`audioroute override` cannot
    # override another process's session), which interrupts the call's player while it holds.
    audioroute override speaker --category playAndRecord --mode voiceChat > /run/override-ucm.log 2>&1 &
    OTHER=$!
    step speaker on,off
    kill -TERM $OTHER 2>/dev/null; wait $OTHER 2>/dev/null; OTHER=
    step back off,on
    kill -TERM $PLAYER 2>/dev/null; wait $PLAYER 2>/dev/null; PLAYER=
    step ended on,off
    say ucm-alive $(alive $MUSIC)
    kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
    sleep 0.5
    # The USB card as a UCM card too (Tests/Fixtures/ucm2-bench/USB-Audio/QEMU, found through the
    # bench's conf.d/USB-Audio by the card's ids): the hot-plug cycles again, on this daemon, one
    # helper for both cards. Each: a fresh `audioroute play` on the speaker; the host hot-adds the
    # USB card when the guest says ready, and removes it when the guest says added.
    usb_control() { amixer -c1 cget "name=Audio Output Volume Control Playback $1" | sed -n 's/^ *: values=//p'; }
    NEW=$(grep -c newDeviceAvailable /run/monitor-ucm.log); OLD=$(grep -c oldDeviceUnavailable /run/monitor-ucm.log)
    u=1
    while [ $u -le $CYCLES ]; do
      audioroute play /root/tone.wav > /run/play-usb-ucm-$u.log 2>&1 &
      PLAYER=$!
      wait_until 100 grep -q playing /run/play-usb-ucm-$u.log || fail "UCM USB cycle $u: audioroute play did not start"
      sleep 1
      say ucm-usb-ready $u
      wait_until 600 initialized card1 || fail "UCM USB cycle $u: no SOUND_INITIALIZED card1 within 60 s of ready"
      wait_until 300 count_at_least $((NEW + u)) newDeviceAvailable /run/monitor-ucm.log || fail "UCM USB cycle $u: no newDeviceAvailable within 30 s"
      wait_until 300 grep -q "USB headphones  playing" /run/play-usb-ucm-$u.log || fail "UCM USB cycle $u: the player did not say it plays on the USB card's headphones: $(tail -2 /run/play-usb-ucm-$u.log | tr '\n' '|')"
      sleep 1.5
      say ucm-usb-added $u usb-switch=$(usb_control Switch) usb-volume=$(usb_control Volume) switch=$(switch) $(audioroute status --json 2>&1 | tr -d '\n')
      say ucm-usb-memory $u $(memory)
      wait_until 600 gone card1 || fail "UCM USB cycle $u: card1 still there 60 s after added"
      wait_until 300 count_at_least $((OLD + u)) oldDeviceUnavailable /run/monitor-ucm.log || fail "UCM USB cycle $u: no oldDeviceUnavailable within 30 s"
      wait_until 100 switch_is on,off
      sleep 1
      say ucm-usb-removed $u switch=$(switch) $(audioroute ports --json 2>&1 | tr -d '\n')
      kill -TERM $PLAYER 2>/dev/null; wait $PLAYER 2>/dev/null; PLAYER=
      u=$((u + 1))
    done
    say ucm-usb-memory-end $(memory)
  }
  kill -TERM $WATCH 2>/dev/null
  echo $POWER_SAVE > /sys/module/snd_hda_intel/parameters/power_save
  say ucm-done
fi
# The tower lost while it holds a stream: music (500 Hz) held by a call (900 Hz, 3.5 s), then the
# daemon killed (SIGKILL). Both plugin streams are released and play on outside the tower, each
# saying so once; the music is heard again once the call's aplay ends. Last: no daemon after it.
if [ -n "$TOWER" ]; then
  aplay -q -D audioroute /root/music.wav > /run/aplay-lost-music.log 2>&1 &
  MUSIC=$!
  sleep 1.5; say lost-before; sleep 1.5
  say lost-call
  aplay -q -D audioroute:CATEGORY=playAndRecord /root/call.wav > /run/aplay-lost-call.log 2>&1 &
  OTHER=$!
  sleep 2.5; say lost-held $(alive $MUSIC)
  kill -KILL $DAEMON; wait $DAEMON 2>/dev/null; DAEMON=
  wait $OTHER; status=$?; OTHER=
  sleep 1; say lost-after $status; sleep 1.5
  say lost-end $(alive $MUSIC) music-said=$(grep -c "went away" /run/aplay-lost-music.log) call-said=$(grep -c "went away" /run/aplay-lost-call.log)
  kill -TERM $MUSIC 2>/dev/null; wait $MUSIC 2>/dev/null; MUSIC=
fi
finish
