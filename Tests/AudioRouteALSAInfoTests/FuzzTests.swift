// Random truncations and byte flips of real reports: every one is read or refused with an
// ALSAInfoError, never a crash, and what is read classifies.
import AudioRouteALSAInfo
import PropertyBased
import Testing

/// The corpus's reports, and the synthetic one of SectionTests when the corpus is empty.
let fuzzSeeds: [[UInt8]] = {
    var seeds = Corpus.records.compactMap { try? Corpus.report($0) }.map { Array($0.utf8) }
    seeds.append(Array(report([("Soundcards recognised by ALSA", sofCards), ("Aplay/Arecord output", sofPCMs), ("Amixer output", sofAmixer), ("Alsactl output", sofAlsactl)]).utf8))
    return seeds
}()

struct Mangled: Sendable, CustomStringConvertible {
    var seed: Int
    var bytes: [UInt8]
    var what: String
    var description: String { "seed \(seed): \(what)" }
}

private let mangled = Generator<Mangled, Shrink.None<Mangled>> { rng in
    let seed = Int.random(in: 0..<fuzzSeeds.count, using: &rng)
    var bytes = fuzzSeeds[seed]
    var what: [String] = []
    if Bool.random(using: &rng) {
        let end = Int.random(in: 0...bytes.count, using: &rng)
        bytes = Array(bytes[..<end])
        what.append("cut at \(end)")
    }
    for _ in 0..<Int.random(in: 0...8, using: &rng) where !bytes.isEmpty {
        let at = Int.random(in: 0..<bytes.count, using: &rng)
        // Structure characters are where a parser breaks; random bytes find the rest.
        let choices: [UInt8] = Array("{}[]'\"\n\t !-:#0123456789".utf8) + [0, 0xFF, 0xC3, UInt8.random(in: 0...255, using: &rng)]
        bytes[at] = choices[Int.random(in: 0..<choices.count, using: &rng)]
        what.append("byte \(at)")
    }
    if Int.random(in: 0..<8, using: &rng) == 0, !bytes.isEmpty {
        let at = Int.random(in: 0..<bytes.count, using: &rng)
        bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...400, using: &rng)))
        what.append("hole at \(at)")
    }
    return Mangled(seed: seed, bytes: bytes, what: what.joined(separator: ", "))
}

@Suite struct FuzzTests {
    @Test func mangledReportsAreReadOrRefusedNeverACrash() async {
        await propertyCheck(count: 1500, input: mangled) { sample in
            do {
                let report = try ALSAInfoReport.parse(sample.bytes)
                for card in report.hardware() {
                    _ = card.classify()
                    _ = FakeCardConfiguration.render(card)
                }
            } catch let error as ALSAInfoError {
                #expect(!error.description.isEmpty, "\(sample)")
            } catch {
                Issue.record("\(sample): not an ALSAInfoError: \(error)")
            }
        }
    }

    @Test func everyCutOfAReportIsReadOrRefused() {
        // Every line boundary of the first seed: the cut lands in each section once.
        let seed = fuzzSeeds[0]
        var cuts = 0
        for (index, byte) in seed.enumerated() where byte == UInt8(ascii: "\n") {
            cuts += 1
            if let report = try? ALSAInfoReport.parse(Array(seed[..<index])) { _ = report.hardware().map { $0.classify() } }
        }
        #expect(cuts > 20)
    }
}
