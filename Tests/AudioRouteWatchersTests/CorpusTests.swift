import AudioRouteCore
import Foundation
import Testing

// The corpus: umockdev records of real machines' published udev dumps (Tests/Fixtures/udev,
// sources in its README), each with a `.expect` file of the ports it must and must not give.
// Every record is loaded alone into a testbed and read by the built binary through the real
// libudev path (`audioroute ports --direct --explain --json`), so the classifier sees what
// the event loop reads: jack NAMEs and SW bitmaps, PCI function 0, OF_* properties, pcm_class.

/// What one record must give: `+ <uid> <type> <direction> <availability> <alsa>` lines are the
/// ports it gets, exactly, each with the PCM it opens; `- <type> [<direction>]` or `- <uid>`
/// lines are ports it must not get (said for the cases that matter, and to name them in a failure).
struct CorpusExpectation {
    struct Port: Equatable {
        var uid: String
        var type: String
        var direction: String
        var availability: String
        var alsa: String
    }

    var must: [Port] = []
    var mustNot: [[String]] = []

    init(_ text: String) throws {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "+" where words.count == 6:
                must.append(Port(uid: words[1], type: words[2], direction: words[3], availability: words[4], alsa: words[5]))
            case "-" where words.count == 2 || words.count == 3:
                mustNot.append(Array(words.dropFirst()))
            default:
                throw UmockdevTestbed.Failure(description: "line \(index + 1): not `+ uid type direction availability alsa` or `- type|uid`: \(line)")
            }
        }
    }
}

/// One port as `ports --direct --explain --json` reports it, with the signal that decided it.
struct CorpusPort {
    var uid: String
    var type: String
    var direction: String
    var availability: String
    var alsa: String
    var signal: String

    var label: String { "\(uid) \(type) \(direction) \(availability) \(alsa)" }

    func matches(_ spec: [String]) -> Bool {
        if spec.count == 1 { return spec[0] == uid || spec[0] == type }
        return spec[0] == type && spec[1] == direction
    }
}

@Suite(.serialized) struct CorpusTests {
    static var records: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: UmockdevTestbed.fixtures)) ?? []
        return files.filter { $0.hasSuffix(".expect") }.map { String($0.dropLast(".expect".count)) }.sorted()
    }

    /// Runs every record and reports each failing one by name, with the signal that decided
    /// the wrong port (or, for a missing one, every decision made about its card).
    @Test func everyRecordGivesExactlyItsPorts() throws {
        let records = Self.records
        #expect(records.count >= 31, "the corpus has \(records.count) records")
        var failures: [String] = []
        for record in records {
            let expectation = try CorpusExpectation(String(contentsOfFile: "\(UmockdevTestbed.fixtures)/\(record).expect", encoding: .utf8))
            let (ports, decisions) = try Self.classify(record)
            let byUID = Dictionary(ports.map { ($0.uid, $0) }) { first, _ in first }
            for wanted in expectation.must {
                guard let port = byUID[wanted.uid] else {
                    failures.append("\(record): missing \(wanted.uid) \(wanted.type) \(wanted.direction); decisions: \(decisions.joined(separator: " | "))")
                    continue
                }
                if port.type != wanted.type || port.direction != wanted.direction || port.availability != wanted.availability || port.alsa != wanted.alsa {
                    failures.append("\(record): \(port.label), expected \(wanted.type) \(wanted.direction) \(wanted.availability) \(wanted.alsa), decided by: \(port.signal)")
                }
            }
            for port in ports {
                if let spec = expectation.mustNot.first(where: port.matches) {
                    failures.append("\(record): must not get \(spec.joined(separator: " ")), got \(port.label), decided by: \(port.signal)")
                } else if !expectation.must.contains(where: { $0.uid == port.uid }) {
                    failures.append("\(record): unexpected \(port.label), decided by: \(port.signal)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) failures in \(records.count) records:\n\(failures.joined(separator: "\n"))")
    }

    /// Loads `record` alone into a testbed and returns what the binary classified.
    static func classify(_ record: String) throws -> (ports: [CorpusPort], decisions: [String]) {
        let bench = try UmockdevTestbed()
        defer { bench.close() }
        try bench.load(record)
        let result = try bench.run(["ports", "--direct", "--explain", "--json"])
        guard result.status == 0, case .array(let cards) = try JSON.parse(result.stdout) else {
            throw UmockdevTestbed.Failure(description: "\(record): ports --direct --explain failed (\(result.status)): \(result.stderr)")
        }
        var ports: [CorpusPort] = []
        var decisions: [String] = []
        for card in cards {
            let name = card["card"]?.string ?? "?"
            if case .array(let list)? = card["decisions"] {
                decisions += list.map { "\(name) \($0["subject"]?.string ?? ""): \($0["outcome"]?.string ?? "") <- \($0["signal"]?.string ?? "")" }
            }
            if case .array(let list)? = card["ports"] {
                ports += list.map {
                    CorpusPort(
                        uid: $0["uid"]?.string ?? "", type: $0["type"]?.string ?? "", direction: $0["direction"]?.string ?? "",
                        availability: $0["availability"]?.string ?? "", alsa: $0["alsa"]?.string ?? "-", signal: $0["signal"]?.string ?? "")
                }
            }
        }
        return (ports, decisions)
    }
}
