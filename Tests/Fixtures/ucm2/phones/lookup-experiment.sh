#!/bin/sh
# Which UCM profile libasound finds for the PinePhone and the Librem 5, opened as on the
# device (hw:<card id>, the top-level ucm.conf of the tree unchanged), without the hardware:
# the fake control device (Sources/AudioRouteFakeCard/fake-card-ctl.c) answers each phone's real card identity
# (pinephone-card.conf, librem5-card.conf; README.md beside this file gives their sources).
#
#   lookup-experiment.sh [TREE ...]
#
# TREE is a ucm2 directory (default: the installed /usr/share/alsa/ucm2). For each tree the
# script also builds, in a temporary directory, the same tree with the conf.d links that the
# phones' distributions add (conf.d/simple-card/<long name>.conf pointing at the phone's
# profile) when the tree has the profile but not the link. For each tree, each card identity
# and each layout it prints the verbs (or libasound's error), the ucm2 files libasound looked
# up (strace, when installed), the devices of the first verb and the first device's PCM as
# libasound gives it.
#
# Then, for the cards whose profile was found, it sets each verb and enables each of its
# devices in turn on a card that has the phone's controls, so that a control the profile
# writes and the card lacks shows as an error. That step needs a top-level ucm.conf without
# its lib/generic.conf include: that file redefines ctl.hw as the kernel's (type hw), which
# no fake card can answer. The lookups above use the tree's ucm.conf unchanged.
#
# Needs cc, libasound2-dev and alsa-utils (alsaucm); strace is optional. Leaves nothing behind.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

[ $# -gt 0 ] || set -- /usr/share/alsa/ucm2

cc=${CC:-$(command -v cc || command -v clang || echo cc)}
"$cc" -DPIC -shared -fPIC -o "$work/libasound_module_ctl_audioroute_fakecard.so" \
	"$fixtures/../../Sources/AudioRouteFakeCard/fake-card-ctl.c" -lasound

# The card identities. DMI and the pre-5.14 identities are the variants README.md describes:
# a long name made from SMBIOS tables (booted through UEFI) and the driver name ASoC gave
# simple-card before it set its own.
{
	echo "ctl_type.audioroute_fakecard { lib \"$work/libasound_module_ctl_audioroute_fakecard.so\" }"
	echo 'ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }'
	cat "$here/pinephone-card.conf" "$fixtures/pinephone-controls.conf" \
		"$here/pinephone-controls-upstream.conf" "$here/librem5-card.conf"
	cat <<'EOF'
audioroute_fakecard.PinePhoneDMI { driver "simple-card" name "PinePhone" longname "PINE64-PinephoneA64-" }
audioroute_fakecard.PinePhoneOld { driver "PinePhone" name "PinePhone" longname "PinePhone" }
audioroute_fakecard.L5Old { driver "Librem_5" name "Librem 5" longname "Librem 5" }
EOF
} >"$work/asound.conf"
ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:$work/asound.conf
export ALSA_CONFIG_PATH

# $1 tree: a copy made of links, plus conf.d/simple-card links to the phones' profiles.
with_links() {
	src=$1 out=$2
	mkdir -p "$out/conf.d/simple-card"
	for entry in "$src"/*; do
		name=$(basename "$entry")
		[ "$name" = conf.d ] || ln -s "$entry" "$out/$name"
	done
	for entry in "$src"/conf.d/*; do
		name=$(basename "$entry")
		[ "$name" = simple-card ] || ln -s "$entry" "$out/conf.d/$name"
	done
	for entry in "$src"/conf.d/simple-card/*; do
		[ -e "$entry" ] || [ -L "$entry" ] || continue
		cp -P "$entry" "$out/conf.d/simple-card/"
	done
	# Debian's downstream profiles (Debian 12 and 13): PinePhone/, Librem_5/.
	link() {
		if [ ! -e "$out/conf.d/simple-card/$1" ] && [ -e "$src/$2" ]; then
			ln -s "../../$2" "$out/conf.d/simple-card/$1"
			echo "$1" >>"$out.added"
		fi
	}
	link PinePhone.conf PinePhone/PinePhone.conf
	link "Librem 5.conf" Librem_5/Librem_5.conf
}

# $1 tree, $2 card: verbs, lookups, devices; then every device of the first verb enabled.
probe() {
	ucm=$1 card=$2
	echo "  $card:"
	if ! ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" list _verbs >"$work/out" 2>&1; then
		sed 's/^/    error: /' "$work/out"
	else
		verbs=$(grep -E '^  [0-9]+: ' "$work/out" | sed -E 's/^  [0-9]+: //')
		echo "    verbs: $(echo "$verbs" | paste -sd, - | sed 's/,/, /g')"
	fi
	if command -v strace >/dev/null 2>&1; then
		ALSA_CONFIG_UCM2=$ucm strace -f -e trace=access,openat -o "$work/trace" \
			alsaucm -c "$card" list _verbs >/dev/null 2>&1 || true
		grep -F "$ucm/" "$work/trace" | grep -v -E '/ucm\.conf"|/lib/generic\.conf"' |
			sed -E "s|^[0-9]+ +||; s|$ucm/||; s|^(access\|openat)\((AT_FDCWD, )?\"([^\"]*)\".*= (-?[0-9]+).*|\4 \3|" |
			sed -E 's/^0 /    found:  /; s/^-1 /    absent: /; s/^[0-9]+ /    read:   /' | uniq
	fi
	[ -n "${verbs:-}" ] || return 0
	first=$(echo "$verbs" | head -n 1)
	devices=$(ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" list "_devices/$first" 2>/dev/null |
		grep -E '^  [0-9]+: ' | sed -E 's/^  [0-9]+: //')
	echo "    $first devices: $(echo "$devices" | paste -sd, - | sed 's/,/, /g')"
	device=$(echo "$devices" | head -n 1)
	for value in PlaybackPCM CapturePCM; do
		ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" get "$value/$device/$first" 2>/dev/null | sed 's/^ */    /' || true
	done
	verbs=
	found="$found $card"
}

# $1 tree, $2 card: each device of each verb enabled, one at a time.
sequences() {
	ucm=$1 card=$2
	echo "  $card:"
	ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" list _verbs 2>/dev/null |
		grep -E '^  [0-9]+: ' | sed -E 's/^  [0-9]+: //' >"$work/verbs"
	while IFS= read -r verb; do
		ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" list "_devices/$verb" 2>/dev/null |
			grep -E '^  [0-9]+: ' | sed -E 's/^  [0-9]+: //' >"$work/devices"
		while IFS= read -r device; do
			if ALSA_CONFIG_UCM2=$ucm alsaucm -c "$card" set _verb "$verb" set _enadev "$device" >"$work/set" 2>&1; then
				echo "    verb $verb, enable $device: ok"
			else
				echo "    verb $verb, enable $device: failed"
				sed 's/^/      /' "$work/set"
			fi
		done <"$work/devices"
	done <"$work/verbs"
}

n=0
for tree in "$@"; do
	tree=$(cd "$tree" && pwd)
	n=$((n + 1))
	links=$work/links$n
	with_links "$tree" "$links"
	for layout in "$tree" "$links"; do
		if [ "$layout" = "$tree" ]; then echo "== $tree (unchanged)"; else
			if [ ! -e "$links.added" ]; then
				echo "== $tree already has the distributions' conf.d/simple-card links"
				continue
			fi
			echo "== $tree with the distributions' conf.d/simple-card links:"
			for l in PinePhone.conf "Librem 5.conf"; do
				if [ -L "$tree/conf.d/simple-card/$l" ]; then echo "   $l: the tree has it"
				elif [ -L "$links/conf.d/simple-card/$l" ]; then echo "   $l -> $(readlink "$links/conf.d/simple-card/$l") (added)"
				else echo "   $l: no profile to link"; fi
			done
		fi
		found=
		for card in hw:PinePhone hw:L5 hw:PinePhoneDMI hw:PinePhoneOld hw:L5Old; do
			probe "$layout" "$card"
		done
		[ -n "$found" ] || continue
		seq=$work/seq$n${layout##*/}
		mkdir -p "$seq"
		for entry in "$layout"/*; do
			name=$(basename "$entry")
			[ "$name" = ucm.conf ] || ln -s "$entry" "$seq/$name"
		done
		grep -v 'Include.libgen' "$layout/ucm.conf" >"$seq/ucm.conf"
		echo "   sequences (same files, ucm.conf without its lib/generic.conf include):"
		for card in $found; do
			sequences "$seq" "$card"
		done
	done
done
