# The kernel bench's ucm phase, its guest part (its checks: bench/realkernel/ucm.py); sourced by
# kernel-checks.sh, after the phases before it.
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
  MORE_LOGS="$MORE_LOGS /run/alsaucm.log /run/daemon-ucm.log /run/monitor-ucm.log /run/controls-ucm.log /run/play-ucm-*.log /run/override-ucm.log /run/data-source-ucm.log /run/play-usb-ucm-*.log /run/session-ucm-mute.log"
  switch() { amixer -c0 cget "name=Master Playback Switch" | sed -n 's/^ *: values=//p'; }
  volume() { amixer -c0 cget "name=Master Playback Volume" | sed -n 's/^ *: values=//p'; }
  capture() { amixer -c0 cget "name=Capture Switch" | sed -n 's/^ *: values=//p'; }
  cvol() { amixer -c0 cget "name=Capture Volume" | sed -n 's/^ *: values=//p'; }
  controls() { echo switch=$(switch) volume=$(volume) capture=$(capture); }
  # The configuration alone, without the daemon: alsaucm sets each verb and device on the card's
  # own PCM (hw:Intel,2, its PlaybackPCM) while it plays; the host reads where the tone went.
  ucm() { ALSA_CONFIG_UCM2=$UCM_ROOT alsaucm -c hw:Intel "$@" >> /run/alsaucm.log 2>&1 || fail "UCM: alsaucm $*: $(tail -3 /run/alsaucm.log | tr '\n' '|')"; }
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
  ALSA_CONFIG_UCM2=$UCM_ROOT audiorouted --state-dir /var/lib/audioroute --log-level info --ucm-root $UCM_ROOT 2>/run/daemon-ucm.log &
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
    # The built-in mic's own mute during the call: the Mic device's CaptureSwitch ("Capture
    # Switch"), turned off and on as a mic-mute key does. A mixable recorder beside the call's
    # player says what it hears: off interrupts it (and the call) with builtInMicMuted, whatever
    # the route does meanwhile; on ends it with shouldResume, and the call comes back.
    audioroute session --category playAndRecord --mode voiceChat --options mixWithOthers --activate -- sleep 60 2> /run/session-ucm-mute.log &
    RECORDER=$!
    sleep 1
    amixer -c0 -q cset "name=Capture Switch" off
    began() { grep -q "interruption began" /run/session-ucm-mute.log; }
    wait_until 100 began
    say ucm-mic-muted capture=$(capture) began=$(sed -n 's/.*interruption began (\([A-Za-z]*\)).*/\1/p' /run/session-ucm-mute.log | head -1)
    sleep 1
    amixer -c0 -q cset "name=Capture Switch" on
    ended() { grep -q "interruption ended" /run/session-ucm-mute.log; }
    wait_until 100 ended
    say ucm-mic-unmuted capture=$(capture) ended=$(grep -q "interruption ended shouldResume" /run/session-ucm-mute.log && echo shouldResume || echo none)
    kill -TERM $RECORDER 2>/dev/null; wait $RECORDER 2>/dev/null; RECORDER=
    step resumed off,on
    # The speaker override: the CLI's own playAndRecord session (`audioroute override` cannot
    # override another process's session), which interrupts the call's player while it holds.
    audioroute override speaker --category playAndRecord --mode voiceChat > /run/override-ucm.log 2>&1 &
    OTHER=$!
    step speaker on,off
    kill -TERM $OTHER 2>/dev/null; wait $OTHER 2>/dev/null; OTHER=
    step back off,on
    # The built-in mic's data sources (the profile's Mic and Mic2): the CLI's own call session
    # prefers Mic2 (interrupting the call's player while it holds, as the override did); the
    # helper enables Mic2, whose sequence sets the ADC's volume to 10. When it ends, the call's
    # session, which prefers none, controls again: Mic (50) comes back.
    MIC=$(audioroute ports | sed -n 's/^\([^ ]*\)  builtInMic input.*/\1/p' | head -1)
    cvol_is() { [ "$(cvol)" = "$1" ]; }
    audioroute data-source "$MIC" Mic2 --category playAndRecord --mode voiceChat > /run/data-source-ucm.log 2>&1 &
    OTHER=$!
    wait_until 100 cvol_is 10,10
    sleep 1
    say ucm-datasource mic=$MIC cvol=$(cvol) $(audioroute status --json 2>&1 | tr -d '\n')
    kill -TERM $OTHER 2>/dev/null; wait $OTHER 2>/dev/null; OTHER=
    wait_until 100 cvol_is 50,50
    sleep 1
    say ucm-datasource-back mic=$MIC cvol=$(cvol) $(audioroute status --json 2>&1 | tr -d '\n')
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
