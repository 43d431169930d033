// The hardware values of a route's device (PCMHardwareProbe, RouteDevices), on libasound's null
// PCM: it takes any rate, period and channel count (aplay --dump-hw-params: RATE [1 4294967295],
// CHANNELS [1 1073741823]), so what is installed is what was asked, and its `chmap` field gives
// the channel maps a card's driver would. Real cards are the real-kernel bench's.
import AudioRouteALSA
import AudioRouteSystem
import Testing

private let nullDevice = """
    pcm.bench_null { type null chmap [ "MONO" "FL,FR" "FL,FR,FC,LFE,RL,RR" ] }
    """

private func configuration() throws -> ALSAConfiguration {
    var configuration = try ALSAConfiguration.system()
    try configuration.load(text: nullDevice)
    return configuration
}

@Suite struct PCMHardwareTests {
    @Test func withoutPreferencesTheDeviceIsOpenedAtStereo48kWithA25msPeriodAndFourOfThem() throws {
        let values = try PCMHardwareProbe.probe(device: "bench_null", stream: .playback, configuration: try configuration())
        #expect(values.rate == 48_000)
        #expect(values.channels == 2)
        #expect(values.periodFrames == 1_200)
        #expect(values.bufferFrames == 4_800)
        #expect(values.periodDuration == 0.025)
        #expect(values.bufferDuration == 0.1)
        #expect(values.channelPositions == ["FL", "FR"])
        #expect(values.device == "bench_null")
    }

    @Test func preferencesRefineWhatIsInstalled() throws {
        let request = PCMHardwareRequest(rate: 44_100, periodMicroseconds: 5_000, channels: 6)
        let values = try PCMHardwareProbe.probe(device: "bench_null", stream: .playback, configuration: try configuration(), request: request)
        #expect(values.rate == 44_100)
        #expect(values.channels == 6)
        // 5 ms at 44.1 kHz is 220.5 frames: libasound rounds to one side.
        #expect((220...221).contains(values.periodFrames))
        #expect((880...884).contains(values.bufferFrames))
        #expect(values.channelPositions == ["FL", "FR", "FC", "LFE", "RL", "RR"])
    }

    @Test func aCaptureDeviceIsReadAsCapture() throws {
        let values = try PCMHardwareProbe.probe(
            device: "bench_null", stream: .capture, configuration: try configuration(), request: PCMHardwareRequest(channels: 1))
        #expect(values.channels == 1)
        #expect(values.channelPositions == ["MONO"])
    }

    @Test func aCountWithoutAMapHasNoPositions() throws {
        let values = try PCMHardwareProbe.probe(
            device: "bench_null", stream: .playback, configuration: try configuration(), request: PCMHardwareRequest(channels: 4))
        #expect(values.channels == 4)
        #expect(values.channelPositions.isEmpty)
    }

    @Test func aDeviceWithoutALimitIsReportedAtTheCeiling() throws {
        let values = try PCMHardwareProbe.probe(device: "bench_null", stream: .playback, configuration: try configuration())
        #expect(values.maximumChannels == PCMHardwareProbe.channelCeiling)
    }

    @Test func anUndefinedDeviceIsATypedErrorNamingIt() throws {
        let configuration = try configuration()
        do throws(ALSAError) {
            _ = try PCMHardwareProbe.probe(device: "bench_nowhere", stream: .playback, configuration: configuration)
            Issue.record("an undefined device was probed")
        } catch {
            #expect(error.code < 0)
            #expect(error.operation == "snd_pcm_open bench_nowhere")
        }
    }

    @Test func longNamesComeFromLibasound() {
        #expect(PCMHardwareProbe.longName(position: "FL") == "Front Left")
        #expect(PCMHardwareProbe.longName(position: "LFE") == "LFE")
        #expect(PCMHardwareProbe.longName(position: "bogus") == "bogus")
    }

    @Test func theRouteFileNamesEachSidesDeviceAndControl() throws {
        try withSyncTemporaryDirectory { dir in
            let route = dir + "/asound.conf"
            try writeText(
                route,
                """
                pcm.!audioroute_route { type plug slave.pcm "dmix:CARD=PCH,DEV=0" }
                pcm.?audioroute { type plug slave.pcm "dmix:CARD=PCH,DEV=0" }
                ctl.!audioroute { type hw card "PCH" }
                pcm.!audioroute_route_capture { type plug slave.pcm "null" }
                pcm.?audioroute_capture { type plug slave.pcm "null" }
                """)
            let devices = try RouteDevices(routeFile: route)
            #expect(devices.output == "dmix:CARD=PCH,DEV=0")
            #expect(devices.outputControl == "hw:CARD=PCH")
            #expect(devices.input == nil)
            #expect(devices.inputControl == nil)
        }
    }

    @Test func aMissingRouteFileIsATypedError() throws {
        #expect(throws: ALSAError.self) { _ = try RouteDevices(routeFile: "/nonexistent/audioroute/asound.conf") }
    }
}

@Suite struct MixerVolumeScaleTests {
    /// alsamixer's scale: a control's top is 1, its bottom 0, and -20 dB (a tenth of the
    /// amplitude) on a 0...-60 dB control is (10^(-1/3) - 10^(-1)) / (1 - 10^(-1)).
    @Test func theScaleIsTheCubeRootOfTheAmplitude() throws {
        #expect(ALSASimpleMixer.perceptual(dB: 0, low: -6000, high: 0) == 1)
        #expect(ALSASimpleMixer.perceptual(dB: -6000, low: -6000, high: 0) == 0)
        let expected: Float = (0.46415888 - 0.1) / 0.9
        let value = try #require(ALSASimpleMixer.perceptual(dB: -2000, low: -6000, high: 0))
        #expect(abs(value - expected) < 0.0001)
    }

    @Test func theInverseGivesTheDBBack() throws {
        for dB in [-6000, -4500, -2000, -300, 0] {
            let volume = try #require(ALSASimpleMixer.perceptual(dB: dB, low: -6000, high: 0))
            #expect(ALSASimpleMixer.dB(perceptual: Double(volume), low: -6000, high: 0) == dB)
        }
    }

    @Test func aRangeUnderOneDBIsNotAScale() {
        #expect(ALSASimpleMixer.perceptual(dB: 0, low: -50, high: 0) == nil)
        #expect(ALSASimpleMixer.dB(perceptual: 0.5, low: -50, high: 0) == nil)
    }
}
