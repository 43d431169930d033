import AudioRouteCore
import Foundation
import Testing

@testable import AudioRouteWatchers
import AudioRouteTestKit

/// A USB card's stream files (Tests/Fixtures/usb-stream/README.md, and the stream sections of
/// real alsa-info reports): the widest playback format, and the output port's dmix name it makes.
@Suite struct USBStreamTests {
    static let streams = Subprocess.packageRoot + "/Tests/Fixtures/usb-stream"
    static let reports = Subprocess.packageRoot + "/Tests/Fixtures/alsa-info"

    /// One card's stream file from a report's "!!USB Stream information" section (the files of
    /// every card one after the other): from the line that starts with `header` to the next
    /// card's header (a line that is neither indented, empty nor a section heading) or the end.
    static func stream(report: String, header: String) throws -> String {
        let text = try String(contentsOfFile: "\(reports)/\(report).txt", encoding: .utf8)
        guard let start = text.range(of: "!!USB Stream information") else { throw Missing(what: "no stream section in \(report)") }
        var lines: [Substring] = []
        var inside = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--endcollapse--") { break }
            let heading = !line.isEmpty && !line.hasPrefix(" ") && line != "Playback:" && line != "Capture:"
            if heading { inside = line.hasPrefix(header) }
            if inside { lines.append(line) }
        }
        guard !lines.isEmpty else { throw Missing(what: "no card \(header) in \(report)") }
        return lines.joined(separator: "\n")
    }

    struct Missing: Error { var what: String }

    /// The C-Media CM106's stream0 (alsa-lib pull request 319): altsets of 4 and 6 channels; the
    /// 6-channel one is the widest, with its map.
    @Test func aSurroundCardsWidestAltsetIsItsSixChannels() throws {
        let text = try String(contentsOfFile: "\(Self.streams)/cmedia-cm106-icusbaudio7d.stream0.txt", encoding: .utf8)
        #expect(USBStreamProc.widestPlayback(text) == USBPlaybackFormat(channels: 6, altset: 4, channelMap: "FL FR FC LFE SL SR"))
    }

    /// QEMU's multichannel usb-audio as the real kernel lists it (the real-kernel bench's guest):
    /// stereo, 5.1 and 7.1 altsets; the 7.1 one is the widest.
    @Test func qemusMultichannelCardsWidestIsItsSevenOne() throws {
        let text = try String(contentsOfFile: "\(Self.streams)/qemu-usb-audio-multi.stream0.txt", encoding: .utf8)
        #expect(USBStreamProc.widestPlayback(text) == USBPlaybackFormat(channels: 8, altset: 3, channelMap: "FL FR FC LFE RL RR SL SR"))
    }

    /// Real stereo cards: a running headset (its status names an interface and altset of its
    /// own, with `=`), a DAC with three stereo altsets, a dock. Two channels each; the capture
    /// section does not count.
    @Test func stereoCardsFromRealReportsSayTwo() throws {
        let xps = "laptop-dell-xps17-9700-sof-soundwire-usb-headset-wd19-dock"
        let razer = try Self.stream(report: xps, header: "Razer Razer Kraken X")
        #expect(USBStreamProc.widestPlayback(razer) == USBPlaybackFormat(channels: 2, altset: 1, channelMap: "FL FR"))
        let dock = try Self.stream(report: xps, header: "Dell-WD15-Dock : USB Audio #1")
        #expect(USBStreamProc.widestPlayback(dock) == USBPlaybackFormat(channels: 2, altset: 1, channelMap: "FL FR"))
        let topping = try Self.stream(report: "desktop-intel-nuc8-alc233-usb-dac-topping-d50s", header: "Topping D50s")
        #expect(USBStreamProc.widestPlayback(topping) == USBPlaybackFormat(channels: 2, altset: 1, channelMap: "FL FR"))
    }

    /// A webcam's stream file has only a capture section (mono): no playback format.
    @Test func aCaptureOnlyStreamHasNoPlaybackFormat() throws {
        let report = "usb-webcam-logitech-0809-mic-behringer-uv1"
        let webcam = try Self.stream(report: report, header: "USB Device 0x46d:0x809")
        #expect(webcam.contains("Channels: 1"))
        #expect(USBStreamProc.widestPlayback(webcam) == nil)
        let uv1 = try Self.stream(report: report, header: "Behringer UV1")
        #expect(USBStreamProc.widestPlayback(uv1)?.channels == 2)
    }

    /// A capture section's wider format is not the playback endpoint's; a block whose channel
    /// count does not parse is skipped, not taken as zero or as the next block's; huge counts
    /// are refused; the number of blocks read is bounded.
    @Test func badOrForeignBlocksAreNotCounted() {
        let text = """
            Some Card : USB Audio

            Playback:
              Status: Running
                Interface = 1
                Altset = 2
                Packet Size = 576
              Interface 1
                Altset 1
                Channels: six
                Channel map: FL FR FC LFE SL SR
              Interface 1
                Altset 2
                Channels: 4
              Interface 1
                Altset 3
                Channels: 99999

            Capture:
              Interface 2
                Altset 1
                Channels: 8
            """
        #expect(USBStreamProc.widestPlayback(text) == USBPlaybackFormat(channels: 4, altset: 2))
        let many = "Playback:\n" + String(repeating: "  Interface 1\n    Altset 1\n    Channels: 2\n", count: USBStreamProc.maxFormats) + "  Interface 1\n    Channels: 8\n"
        #expect(USBStreamProc.widestPlayback(many)?.channels == 2)
        #expect(USBStreamProc.widestPlayback("") == nil)
        #expect(USBStreamProc.widestPlayback("Playback:\n  Interface 1\n    Channels: 6 6\n") == nil)
    }

    /// The classifier: a USB card whose playback endpoint takes 6 channels gets an output port
    /// on dmix at 6 channels (with the decision and the stream file's words); a stereo one, an
    /// exclusive one, an admin's PCM and the capture port are as before.
    @Test func aSurroundUSBCardsOutputIsSharedAtItsChannels() {
        var card = Cards.usbDAC()
        card.usbPlayback = [0: USBPlaybackFormat(channels: 6, altset: 4, channelMap: "FL FR FC LFE SL SR")]
        let result = CardClassifier.classify(card)
        #expect(result.ports.map(\.alsa) == ["dmix:CARD=AUDIO,DEV=0,CHANNELS=6"])
        #expect(result.decisions.contains {
            $0.subject == "pcm 0p" && $0.outcome == "shared at 6 channels (dmix:CARD=AUDIO,DEV=0,CHANNELS=6)"
                && $0.signal == "stream0 playback Altset 4, Channels: 6, Channel map: FL FR FC LFE SL SR"
        }, "\(result.decisions)")
        // The port's own signal is still what made the port.
        #expect(result.decisions.last { $0.subject == result.ports.first?.uid }?.signal.hasPrefix("ID_BUS=usb") == true)

        var wide = Cards.usbDAC()
        wide.usbPlayback = [0: USBPlaybackFormat(channels: 18)]
        #expect(CardClassifier.classify(wide).ports.map(\.alsa) == ["dmix:CARD=AUDIO,DEV=0,CHANNELS=8"])

        var stereo = Cards.usbDAC()
        stereo.usbPlayback = [0: USBPlaybackFormat(channels: 2)]
        #expect(CardClassifier.classify(stereo).ports.map(\.alsa) == ["dmix:CARD=AUDIO,DEV=0"])

        var exclusive = card
        exclusive.properties["AUDIOROUTE_ALSA_EXCLUSIVE"] = "1"
        #expect(CardClassifier.classify(exclusive).ports.map(\.alsa) == ["plughw:CARD=AUDIO,DEV=0"])

        var admin = card
        admin.properties["AUDIOROUTE_ALSA_PCM"] = "surround51:CARD=AUDIO"
        let adminResult = CardClassifier.classify(admin)
        #expect(adminResult.ports.map(\.alsa) == ["surround51:CARD=AUDIO"])
        #expect(!adminResult.decisions.contains { $0.subject == "pcm 0p" })

        var headset = Cards.usbHeadset()
        headset.usbPlayback = [0: USBPlaybackFormat(channels: 8)]
        #expect(CardClassifier.classify(headset).ports.map(\.alsa) == ["dmix:CARD=Pro,DEV=0,CHANNELS=8", "dsnoop:CARD=Pro,DEV=0"])
    }
}
