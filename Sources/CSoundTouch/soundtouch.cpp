// The C ABI over soundtouch::SoundTouch (audioroute_soundtouch.h). Exceptions stop here.
#include "audioroute_soundtouch.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <new>

#include <soundtouch/SoundTouch.h>

// Debian builds libSoundTouch with float samples (STTypes.h's default; no -D in soundtouch.pc):
// the C ABI hands floats through as they are.
static_assert(sizeof(soundtouch::SAMPLETYPE) == sizeof(float), "libSoundTouch must use float samples");

// SoundTouch's own flush trims its output to the frames fed divided by the tempo *when they were
// fed*; but frames still in its input when the tempo changes are stretched at the new one, so
// after a change its trim cut the end of the source. The shim counts the expected output itself,
// moving what its input holds to the new tempo at each change, and trims to that.
struct ar_soundtouch {
    soundtouch::SoundTouch engine;
    double tempo = 1;
    /// Output frames the source fed so far makes at the tempos it is (or will be) stretched at.
    double expected = 0;
    /// Output frames received since the last clear.
    unsigned long long received = 0;
};

static bool valid_tempo(double tempo) {
    return std::isfinite(tempo) && tempo >= AR_SOUNDTOUCH_MIN_TEMPO && tempo <= AR_SOUNDTOUCH_MAX_TEMPO;
}

extern "C" int ar_soundtouch_create(unsigned sample_rate, unsigned channels, double tempo, ar_soundtouch **out) {
    if (out == nullptr) return -EINVAL;
    *out = nullptr;
    if (sample_rate < AR_SOUNDTOUCH_MIN_RATE || sample_rate > AR_SOUNDTOUCH_MAX_RATE) return -EINVAL;
    if (channels == 0 || channels > AR_SOUNDTOUCH_MAX_CHANNELS || !valid_tempo(tempo)) return -EINVAL;
    try {
        auto *st = new ar_soundtouch;
        st->engine.setSampleRate(sample_rate);
        st->engine.setChannels(channels);
        st->engine.setTempo(tempo);
        st->tempo = tempo;
        *out = st;
        return 0;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EINVAL;
    }
}

extern "C" void ar_soundtouch_destroy(ar_soundtouch *st) { delete st; }

extern "C" int ar_soundtouch_set_tempo(ar_soundtouch *st, double tempo) {
    if (!valid_tempo(tempo)) return -EINVAL;
    if (tempo == st->tempo) return 0;
    try {
        st->engine.setTempo(tempo);
        st->expected += st->engine.numUnprocessedSamples() * (1 / tempo - 1 / st->tempo);
        st->tempo = tempo;
        return 0;
    } catch (...) {
        return -EINVAL;
    }
}

extern "C" int ar_soundtouch_put(ar_soundtouch *st, const float *interleaved, unsigned frames) {
    if (frames == 0) return 0;
    // SoundTouch counts samples in a uint and buffers them all: at most a second of the highest
    // rate at a time keeps its memory bounded by what the caller holds anyway.
    if (interleaved == nullptr || frames > AR_SOUNDTOUCH_MAX_RATE) return -EINVAL;
    try {
        st->engine.putSamples(interleaved, frames);
        st->expected += frames / st->tempo;
        return 0;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EINVAL;
    }
}

extern "C" int ar_soundtouch_receive(ar_soundtouch *st, float *interleaved, unsigned max_frames) {
    if (interleaved == nullptr || max_frames == 0) return 0;
    if (max_frames > INT_MAX) max_frames = INT_MAX;
    unsigned got = st->engine.receiveSamples(interleaved, max_frames);
    st->received += got;
    return static_cast<int>(got);
}

extern "C" int ar_soundtouch_available(const ar_soundtouch *st) {
    unsigned ready = st->engine.numSamples();
    return ready > INT_MAX ? INT_MAX : static_cast<int>(ready);
}

extern "C" int ar_soundtouch_required(ar_soundtouch *st) {
    return st->engine.getSetting(SETTING_NOMINAL_INPUT_SEQUENCE);
}

extern "C" int ar_soundtouch_flush(ar_soundtouch *st) {
    double rounded = std::floor(st->expected + 0.5);
    double still = rounded - static_cast<double>(st->received);
    unsigned wanted = still <= 0 ? 0 : still >= UINT_MAX ? UINT_MAX : static_cast<unsigned>(still);
    try {
        // Silence pushes the last frames through its windows (as SoundTouch's flush does: 128
        // frames at a time, at most 200 times), then the output is cut to what is expected.
        float silence[128 * AR_SOUNDTOUCH_MAX_CHANNELS] = {};
        for (int i = 0; st->engine.numSamples() < wanted && i < 200; i++) st->engine.putSamples(silence, 128);
        st->engine.adjustAmountOfSamples(wanted);
        return 0;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EINVAL;
    }
}

extern "C" void ar_soundtouch_clear(ar_soundtouch *st) {
    st->engine.clear();
    st->expected = 0;
    st->received = 0;
}
