#!/bin/sh
# Measures what an ALSA plugin costs in C and in Swift (docs/decisions.md, "The ALSA plugin's
# language"): size, open time (dlopen + open), resident memory added to aplay, load/unload cycles,
# and a Swift client with Swift concurrency beside each plugin (two Swift runtimes in one process).
# Usage: Benchmarks/plugin-language/measure.sh [RUNS]   (needs gcc, swiftc, libasound2-dev, aplay)
set -eu
RUNS=${1:-30}
SRC=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"
mkdir c sdyn sstat
gcc -O2 -DPIC -shared -fPIC -Wall -o c/libasound_module_pcm_audioroute.so "$SRC/minimal.c" -lasound
swiftc -O -parse-as-library -emit-library -module-name minimal -I "$SRC/CALSAPlugin" "$SRC/minimal.swift" \
    -o sdyn/libasound_module_pcm_audioroute.so
swiftc -O -parse-as-library -emit-library -static-stdlib -module-name minimal -I "$SRC/CALSAPlugin" "$SRC/minimal.swift" \
    -o sstat/libasound_module_pcm_audioroute.so
gcc -O2 -Wall -o loadtime "$SRC/loadtime.c" -lasound
swiftc -O -parse-as-library -I "$SRC/CALSAPlugin" "$SRC/swiftclient.swift" -o swiftclient-dyn
swiftc -O -parse-as-library -static-stdlib -I "$SRC/CALSAPlugin" "$SRC/swiftclient.swift" -o swiftclient-static
head -c 1920000 /dev/zero > ten-seconds.raw   # 10 s of S16_LE stereo 48 kHz; the minimal plugins do not pace

median_max() { sort -n | awk '{ v[NR] = $1 } END { printf "median %d us, worst %d us\n", v[int((NR + 1) / 2)], v[NR] }'; }

for v in c sdyn sstat; do
    mkdir "home-$v"
    printf 'pcm_type.audioroute { lib "%s/%s/libasound_module_pcm_audioroute.so" }\npcm.!audioroute { type audioroute }\n' "$W" "$v" \
        > "home-$v/.asoundrc"
done
echo "== size (bytes), stripped"
for v in c sdyn sstat; do strip -o "$v.stripped" "$v/libasound_module_pcm_audioroute.so"; echo "$v $(stat -c %s "$v.stripped")"; done
echo "== snd_pcm_open time in a fresh process, $RUNS runs (null: the configuration alone)"
echo "null $(for i in $(seq "$RUNS"); do HOME="$W/home-c" ./loadtime null; done | median_max)"
for v in c sdyn sstat; do echo "$v $(for i in $(seq "$RUNS"); do HOME="$W/home-$v" ./loadtime audioroute; done | median_max)"; done
echo "== maximum resident set of aplay (kB), 10 s of frames"
echo "null $(HOME="$W/home-c" /usr/bin/time -f %M aplay -q -D null -t raw -f S16_LE -c 2 -r 48000 ten-seconds.raw 2>&1)"
for v in c sdyn sstat; do
    echo "$v $(HOME="$W/home-$v" /usr/bin/time -f %M aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 ten-seconds.raw 2>&1)"
done
echo "== 300 open/play/close/free cycles in one process (the plugin is dlclosed each time)"
for v in c sdyn sstat; do echo "$v $(HOME="$W/home-$v" ./loadtime audioroute 300)"; done
echo "== a Swift client (4 tasks playing at once, 20 rounds, dlclose between rounds)"
for v in c sdyn sstat; do
    for client in swiftclient-dyn swiftclient-static; do
        if out=$(HOME="$W/home-$v" timeout 60 "./$client" audioroute 2>&1); then r=ok; else r="FAILED $?"; fi
        echo "$v in $client: $r $(printf '%s' "$out" | grep -vc '^results') other lines of output"
    done
done
echo "== the real plugin (scripts/build-alsa-plugin) on a route of null PCMs"
real=$("$SRC/../../scripts/build-alsa-plugin" "$W/real")
gcc -O2 -Wall -o movetime "$SRC/movetime.c" -lasound
mkdir -p home-real run/audioroute
sed "s|lib \"libasound_module_pcm_audioroute.so\"|lib \"$real\"|" "$SRC/../../share/alsa/50-audioroute.conf" > home-real/.asoundrc
printf 'pcm.!move_a { type plug slave.pcm "null" }\npcm.!move_b { type plug slave.pcm "null" }\n' >> home-real/.asoundrc
printf 'pcm.!audioroute_route {\n    type plug\n    slave.pcm "null"\n}\n' > run/audioroute/asound.conf
echo "size $(stat -c %s "$real") (with -g), $(strip -o real.stripped "$real" && stat -c %s real.stripped) stripped"
echo "open: plug:null $(for i in $(seq "$RUNS"); do HOME="$W/home-real" ./loadtime plug:null; done | median_max)"
echo "open: audioroute $(for i in $(seq "$RUNS"); do HOME="$W/home-real" XDG_RUNTIME_DIR="$W/run" ./loadtime audioroute; done | median_max)"
echo "aplay RSS: $(HOME="$W/home-real" XDG_RUNTIME_DIR="$W/run" /usr/bin/time -f %M aplay -q -D audioroute -t raw -f S16_LE -c 2 -r 48000 ten-seconds.raw 2>&1) kB"
HOME="$W/home-real" XDG_RUNTIME_DIR="$W/run" ./movetime "$W/run/audioroute/asound.conf" 50
