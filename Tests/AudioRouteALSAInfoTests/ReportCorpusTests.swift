// The corpus: public alsa-info.sh reports (Tests/Fixtures/alsa-info, sources in its README), each
// with the ports its machine must get, written from the hardware's facts. Every report goes
// through the parser and the real classifier; each port is checked by type, direction and PCM.
@testable import AudioRouteALSAInfo
import AudioRouteCore
import AudioRouteWatchers
import Testing

/// What one report's machine must give: `+ <type> <direction> <pcm> [availability]` lines are its
/// ports, exactly; `- <type> [<direction> [<pcm>]]` lines are ports it must not get; `ucm <card id>`
/// names a card with a stock UCM profile (the UCM path decides its ports).
struct ReportExpectation {
    struct Port: Equatable, CustomStringConvertible {
        var type: String
        var direction: String
        var alsa: String
        var availability: String?
        var description: String { "\(type) \(direction) \(alsa)\(availability.map { " \($0)" } ?? "")" }
    }

    var must: [Port] = []
    var mustNot: [[String]] = []
    var ucmCards: [String] = []

    init(_ text: String) throws {
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingSpace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "+" where words.count == 4 || words.count == 5:
                must.append(Port(type: words[1], direction: words[2], alsa: words[3], availability: words.count == 5 ? words[4] : nil))
            case "-" where (2...4).contains(words.count):
                mustNot.append(Array(words.dropFirst()))
            case "ucm" where words.count == 2:
                ucmCards.append(words[1])
            default:
                throw ALSAInfoError(section: nil, line: index + 1, "not `+ type direction pcm [availability]`, `- type [direction [pcm]]` or `ucm <card id>`: \(line)")
            }
        }
    }
}

/// One port the classifier gave, with what decided it.
struct ReportPort: CustomStringConvertible {
    var type: String
    var direction: String
    var alsa: String
    var availability: String
    var uid: String
    var signal: String

    var description: String { "\(type) \(direction) \(alsa) \(availability) (\(uid) <- \(signal))" }

    func matches(_ port: ReportExpectation.Port) -> Bool {
        type == port.type && direction == port.direction && alsa == port.alsa && (port.availability.map { $0 == availability } ?? true)
    }

    func matches(_ spec: [String]) -> Bool {
        zip(spec, [type, direction, alsa]).allSatisfy { $0 == $1 }
    }

    /// The card id in the PCM name (`dmix:CARD=PCH,DEV=0`).
    var cardID: String? {
        guard let range = alsa.firstRange(of: "CARD=") else { return nil }
        return String(alsa[range.upperBound...].prefix { $0 != "," })
    }
}

@Suite(.serialized) struct ReportCorpusTests {
    /// The fake card's plugin, built once (scripts/ucm-fake-cards builds it with no card).
    static let fakeCards: Result<UCMMachineBench, TestFailure> = Result { () throws(TestFailure) in
        do { return try UCMMachineBench(cardFiles: [], states: []) } catch { throw TestFailure("\(error)") }
    }

    /// The machine's ports as `audioroute ports --alsa-info` gives them: each card's stock UCM
    /// profile through the real helper, from the report's card (the fake card), else the classifier.
    static func ports(_ name: String) throws -> (ports: [ReportPort], decisions: [String]) {
        let report = try ALSAInfoReport.parse(Corpus.report(name))
        let ucm = ReportUCM(
            helper: Subprocess.product("audioroute-ucm"), plugin: try fakeCards.get().directory + "/bench/libasound_module_ctl_audioroute_fakecard.so")
        let machine = try ReportMachine(report, ucm: ucm)
        var ports: [ReportPort] = []
        var decisions: [String] = []
        for explanation in machine.explanations {
            let result = explanation.classification
            let id = explanation.card.attributes["id"] ?? explanation.card.sysname
            decisions += result.decisions.map { "\(id) \($0.subject): \($0.outcome) <- \($0.signal)" }
            for port in result.ports {
                ports.append(
                    ReportPort(
                        type: port.type.rawValue, direction: port.direction.rawValue, alsa: port.alsa?.description ?? "-",
                        availability: result.availability[port.uid]?.rawValue ?? "present", uid: port.uid,
                        signal: result.decisions.last { $0.subject == port.uid }?.signal ?? "?"))
            }
        }
        return (ports, decisions)
    }

    @Test func theCorpusIsLargeAndEveryReportHasItsSourceInTheReadme() throws {
        let records = Corpus.records
        #expect(records.count >= 30, "the corpus has \(records.count) reports")
        let readme = try readText(Corpus.directory + "/README.md")
        for record in records { #expect(readme.contains("`\(record).txt`"), "\(record) is not in the README") }
    }

    /// Every report gives exactly its ports; a failure names the report, the expected ports and
    /// the ports it got, each with the signal that decided it.
    @Test func everyReportGivesExactlyItsPorts() throws {
        var failures: [String] = []
        for record in Corpus.records {
            let expectation = try ReportExpectation(Corpus.expectation(record))
            let (ports, decisions) = try Self.ports(record)
            var problems: [String] = []
            var unmatched = ports
            for wanted in expectation.must {
                if let index = unmatched.firstIndex(where: { $0.matches(wanted) }) {
                    unmatched.remove(at: index)
                } else {
                    problems.append("missing \(wanted)")
                }
            }
            for port in ports {
                if let spec = expectation.mustNot.first(where: port.matches) { problems.append("must not get \(spec.joined(separator: " ")): got \(port)") }
            }
            for port in unmatched where !expectation.mustNot.contains(where: port.matches) { problems.append("unexpected \(port)") }
            guard !problems.isEmpty else { continue }
            let ucm = Set(expectation.ucmCards)
            let ucmNote = ucm.isEmpty ? "" : "  (cards with a stock UCM profile, whose ports the UCM path decides: \(ucm.sorted().joined(separator: ", ")))\n"
            failures.append(
                "\(record):\n" + problems.map { "  \($0)\n" }.joined() + ucmNote
                    + "  expected: \(expectation.must.map(\.description).joined(separator: "; "))\n"
                    + "  got: \(ports.map(\.description).joined(separator: "; "))\n"
                    + "  decisions: \(decisions.joined(separator: " | "))")
        }
        #expect(failures.isEmpty, "\(failures.count) of \(Corpus.records.count) reports fail:\n\(failures.joined(separator: "\n"))")
    }

    @Test func everyExpectationIsWellFormedAndNamesItsCardsUCMProfile() throws {
        for record in Corpus.records {
            let expectation = try ReportExpectation(Corpus.expectation(record))
            #expect(!expectation.must.isEmpty || !expectation.mustNot.isEmpty, "\(record) expects nothing")
            let report = try ALSAInfoReport.parse(Corpus.report(record))
            let ids = Set(report.hardware().compactMap { $0.record.attributes["id"] })
            for id in expectation.ucmCards { #expect(ids.contains(id), "\(record): ucm \(id) names no card of the report") }
            for port in expectation.must {
                let card = ReportPort(type: port.type, direction: port.direction, alsa: port.alsa, availability: "", uid: "", signal: "").cardID
                #expect(card.map(ids.contains) == true, "\(record): \(port) names no card of the report")
            }
        }
    }

    /// The cards with a stock UCM profile get their full control list (the UCM tests load it into
    /// the fake card) where the report has one.
    @Test func ucmCardsRenderAsFakeCards() throws {
        for record in Corpus.records {
            let expectation = try ReportExpectation(Corpus.expectation(record))
            let report = try ALSAInfoReport.parse(Corpus.report(record))
            for card in report.hardware() where expectation.ucmCards.contains(card.record.attributes["id"] ?? "") && card.hasControls {
                let rendered = FakeCardConfiguration.render(card)
                #expect(rendered.text.contains("audioroute_fakecard."), "\(record)")
                let kept = card.controls.count - rendered.skipped.count
                #expect(kept > 0, "\(record): no control the fake card can hold")
            }
        }
    }
}
