import AudioRouteCore
import Testing

/// What the PulseAudio helper sends a client's stream for the daemon's requests, and the user's
/// volume and mute it gives back (docs/daemon.md, "The PulseAudio helper"). Volumes are
/// libpulse's pa_volume_t; the gains are pa_sw_volume_from_linear's (0.3 is 43872).
@Suite struct PulseStreamHoldTests {
    static let norm = PulseVolume.norm
    /// pa_sw_volume_from_linear(0.3): round(cbrt(0.3) * 65536).
    static let duck: UInt32 = 43872
    static func reading(_ volume: [UInt32], muted: Bool = false) -> PulseStreamReading { PulseStreamReading(muted: muted, volume: volume) }

    @Test func libpulsesArithmetic() {
        #expect(PulseVolume.multiply(Self.norm, Self.duck) == Self.duck)
        #expect(PulseVolume.multiply(32768, Self.norm / 2) == 16384)
        // Rounding: dividing the ducked volume does not quite give it back, so the user's volume is
        // kept, not worked out again from the lowered one.
        #expect(PulseVolume.divide(PulseVolume.multiply(40000, Self.duck), Self.duck) == 39999)
        #expect(PulseVolume.divide(1000, 0) == 0)
        #expect(PulseVolume.divide(PulseVolume.max, 1) == PulseVolume.max, "clamped to PA_VOLUME_MAX")
    }

    @Test func aPauseMutesAndItsEndUnmutes() {
        var hold = PulseStreamHold()
        #expect(hold.apply(paused: true, gain: nil, to: Self.reading([Self.norm, Self.norm])) == PulseStreamChange(mute: true))
        #expect(!hold.isEmpty)
        // The same request again sends nothing.
        #expect(hold.apply(paused: true, gain: nil, to: Self.reading([Self.norm, Self.norm], muted: true)).isEmpty)
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([Self.norm, Self.norm], muted: true)) == PulseStreamChange(mute: false))
        #expect(hold.isEmpty)
    }

    @Test func aStreamItsUserMutedStaysMuted() {
        var hold = PulseStreamHold()
        #expect(hold.apply(paused: true, gain: nil, to: Self.reading([Self.norm], muted: true)).isEmpty)
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([Self.norm], muted: true)).isEmpty, "not unmuted: its user muted it")
        #expect(hold.isEmpty)
    }

    @Test func aStreamItsUserUnmutedDuringThePauseIsLeftAsTheUserLeavesIt() {
        var hold = PulseStreamHold()
        _ = hold.apply(paused: true, gain: nil, to: Self.reading([Self.norm]))
        hold.observe(Self.reading([Self.norm], muted: false))
        // Muted again by the user later: the pause's end does not unmute it.
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([Self.norm], muted: true)).isEmpty)
    }

    @Test func aDuckIsTheUsersVolumeTimesTheGainAndItsEndTheUsersVolume() {
        var hold = PulseStreamHold()
        let user: [UInt32] = [50000, 40000]
        let ducked = user.map { PulseVolume.multiply($0, Self.duck) }
        #expect(hold.apply(paused: false, gain: Self.duck, to: Self.reading(user)) == PulseStreamChange(volume: ducked))
        // Silenced on top: from the user's volume, not from the ducked one.
        #expect(hold.apply(paused: false, gain: 0, to: Self.reading(ducked)) == PulseStreamChange(volume: [0, 0]))
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([0, 0])) == PulseStreamChange(volume: user))
        #expect(hold.isEmpty)
        // A volume of 1 for a stream never lowered sends nothing.
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading(user)).isEmpty)
    }

    @Test func theUsersChangeDuringADuckIsKept() {
        var hold = PulseStreamHold()
        let user: [UInt32] = [Self.norm, Self.norm]
        let ducked = user.map { PulseVolume.multiply($0, Self.duck) }
        _ = hold.apply(paused: false, gain: Self.duck, to: Self.reading(user))
        // The server reports what the helper set: nothing changes.
        hold.observe(Self.reading(ducked))
        #expect(hold.userVolume == user)
        // The user turns it down to 20000 while ducked: 20000 without the gain is theirs.
        hold.observe(Self.reading([20000, 20000]))
        let theirs = PulseVolume.divide(20000, Self.duck)
        #expect(hold.userVolume == [theirs, theirs])
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([20000, 20000])) == PulseStreamChange(volume: [theirs, theirs]))
    }

    @Test func theUsersChangeWhileSilencedIsTakenAsItIs() {
        var hold = PulseStreamHold()
        _ = hold.apply(paused: false, gain: 0, to: Self.reading([Self.norm]))
        hold.observe(Self.reading([30000]))
        #expect(hold.apply(paused: false, gain: nil, to: Self.reading([30000])).isEmpty, "the user's 30000 stays")
    }

    @Test func aVolumeThatCannotBeSetIsRefusedAndTheMuteStillApplies() {
        var hold = PulseStreamHold()
        let fixed = PulseStreamReading(muted: false, volume: [Self.norm], volumeWritable: false)
        #expect(hold.apply(paused: true, gain: Self.duck, to: fixed) == PulseStreamChange(mute: true, volumeRefused: true))
        #expect(hold.userVolume == nil)
    }
}
