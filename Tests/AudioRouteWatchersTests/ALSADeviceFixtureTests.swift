// Every ALSA name the fixtures hold (the udev and alsa-info corpora's expected PCMs, the
// scenarios, the UCM fixtures) and every PlaybackPCM/CapturePCM of the installed
// alsa-ucm-conf parses into the value and renders the same bytes: the text form of ports
// (JSON, D-Bus, state files) is unchanged by the value.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteTestKit
import Testing

@Suite struct ALSADeviceFixtureTests {
    /// The files under `path`, depth first (a missing directory: none).
    static func files(under path: String) -> [String] {
        guard let entries = try? Directory.entries(path) else { return [] }
        return entries.sorted().flatMap { entry -> [String] in
            let full = path + "/" + entry
            return (try? Directory.entries(full)) != nil ? files(under: full) : [full]
        }
    }

    /// The words of `text` that begin with one of `prefixes`, each up to a space, a quote, a
    /// backtick or a parenthesis.
    static func names(in text: String, prefixes: [String]) -> [String] {
        var found: [String] = []
        for line in text.split(separator: "\n") {
            for word in line.split(whereSeparator: { " \t\"'`()".contains($0) }) where prefixes.contains(where: { word.hasPrefix($0) }) {
                found.append(String(word))
            }
        }
        return found
    }

    static let prefixes = ["dmix:", "dsnoop:", "plughw:", "hw:", "hdmi:", "bluealsa:", "_ucm"]

    @Test func everyNameInTheFixturesRoundTrips() throws {
        let root = Subprocess.packageRoot
        let paths = (Self.files(under: root + "/Tests/Fixtures") + Self.files(under: root + "/examples"))
            .filter { $0.hasSuffix(".expect") || $0.hasSuffix(".json") || $0.hasSuffix(".conf") }
        var shapes: [String: Int] = [:]
        for path in paths {
            for name in Self.names(in: try readText(path), prefixes: Self.prefixes) {
                let device = try ALSADevice(parsing: name)
                #expect(device.description == name, "\(path)")
                #expect(try ALSADevice(parsing: device.description) == device)
                let shape = switch device {
                case .card(let pcm): "\(pcm.plugin)\(pcm.channels != nil ? "+channels" : "")"
                case .bluealsa: "bluealsa"
                case .named: "named"
                }
                shapes[shape, default: 0] += 1
            }
        }
        // The corpora hold these shapes of the classifier's (a USB card's CHANNELS= is only in
        // the tests' code: ALSADeviceTests, ClassifierTests).
        for shape in ["dmix", "dsnoop", "hdmi", "plughw", "hw"] { #expect(shapes[shape, default: 0] > 0, "no \(shape) name in the fixtures: \(shapes)") }
    }

    /// The classifier's names in the corpora's `.expect` files are all card PCMs with an id and a
    /// device: nothing the corpora expect is passed through as an unknown name.
    @Test func theCorporasExpectedNamesAreCardPCMs() throws {
        let root = Subprocess.packageRoot
        let paths = (Self.files(under: root + "/Tests/Fixtures/udev") + Self.files(under: root + "/Tests/Fixtures/alsa-info")).filter { $0.hasSuffix(".expect") }
        var count = 0
        for path in paths {
            // The port lines (`+ …`, `- …`), not the comments.
            let ports = try readText(path).split(separator: "\n").filter { $0.hasPrefix("+ ") || $0.hasPrefix("- ") }.joined(separator: "\n")
            for name in Self.names(in: ports, prefixes: ["dmix:", "dsnoop:", "plughw:", "hdmi:"]) {
                let pcm = try #require(try ALSADevice(parsing: name).cardPCM, "\(path): \(name)")
                guard case .id = pcm.card else {
                    Issue.record("\(path): \(name) names its card by index")
                    continue
                }
                #expect(pcm.device != nil && pcm.arguments == .keywords, "\(path): \(name)")
                count += 1
            }
        }
        #expect(count > 100)
    }

    /// alsa-ucm-conf's PCM values, as written (with `${CardId}`) and with the card id put in as
    /// alsa-lib does: each renders its own bytes, and a plain `hw:<id>[,<n>]` is the card's hw
    /// PCM with that device (0 when the profile gives none).
    @Test func theStockUCMProfilesPCMsRoundTrip() throws {
        let paths = Self.files(under: "/usr/share/alsa/ucm2").filter { $0.hasSuffix(".conf") }
        try #require(!paths.isEmpty, "alsa-ucm-conf is not installed (scripts/bootstrap)")
        var hardware = 0
        for path in paths {
            for line in try readText(path).split(separator: "\n") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                guard words.count >= 2, words[0] == "PlaybackPCM" || words[0] == "CapturePCM", words[1].hasPrefix("\""), words[1].hasSuffix("\""), words[1].count > 2 else { continue }
                let raw = String(words[1].dropFirst().dropLast())
                for text in [raw, raw.replacing("${CardId}", with: "sofhdadsp")] {
                    let device = try ALSADevice(parsing: text)
                    #expect(device.description == text, "\(path)")
                }
                let resolved = raw.replacing("${CardId}", with: "sofhdadsp")
                if resolved.hasPrefix("hw:sofhdadsp"), let number = Int(resolved.dropFirst("hw:sofhdadsp,".count)) ?? (resolved == "hw:sofhdadsp" ? 0 : nil) {
                    let pcm = try #require(try ALSADevice(parsing: resolved).cardPCM, "\(path): \(resolved)")
                    #expect(pcm.plugin == .hw && pcm.card == .id("sofhdadsp") && pcm.deviceNumber == number, "\(path): \(resolved)")
                    hardware += 1
                }
            }
        }
        #expect(hardware > 100)
    }
}
