// The machine a report describes, as the daemon would see it: every card through the same port
// state the daemon keeps (UdevPortState), and, given the UCM helper, each card's UCM profile read
// through the stock lookup from a control device that stands for the report's card (the fake
// card: Sources/AudioRouteFakeCard/fake-card-ctl.c, FakeCardConfiguration). docs/alsa-info.md.
import AudioRouteCore
import AudioRouteSystem
import AudioRouteWatchers
import Logging
import AudioRouteUCMHelper

/// How a report's cards are given to the UCM helper.
public struct ReportUCM: Sendable {
    /// The helper (`audioroute-ucm`).
    public var helper: String
    /// The UCM tree to look profiles up in (nil: libasound's, /usr/share/alsa/ucm2).
    public var ucmRoot: String?
    /// The fake card's plugin (`libasound_module_ctl_audioroute_fakecard.so`); nil: libasound
    /// finds it in its own plugin directory, where scripts/build-alsa-plugin's is installed.
    public var plugin: String?

    /// How to ask: the helper, the tree, the plugin.
    public init(helper: String, ucmRoot: String? = nil, plugin: String? = nil) {
        self.helper = helper
        self.ucmRoot = ucmRoot
        self.plugin = plugin
    }
}

/// The ports and explanations of a report's machine.
public struct ReportMachine: Sendable {
    /// Each card with its jacks and how its ports were decided (by its UCM profile or classified).
    public var explanations: [CardExplanation]
    /// Every port, card by card, as the daemon would announce them.
    public var ports: [Port]
    /// The report's cards as read, by syspath (`/sys/class/sound/card<n>`).
    public var cards: [String: ALSAInfoCardHardware]
    /// What the fake cards left out (controls of types or interfaces they cannot hold).
    public var skipped: [String]

    /// The machine of `report`; with `ucm`, each card's profile asked of the helper.
    public init(_ report: ALSAInfoReport, ucm: ReportUCM? = nil, logger: Logger = Logger(label: "audioroute.alsa-info")) throws {
        let hardware = report.hardware()
        var state = UdevPortState(logger: logger, usesUCMHelpers: ucm != nil)
        for card in hardware {
            _ = state.apply(.card(card.record))
            for jack in card.jacks { _ = state.apply(.jack(jack)) }
        }
        var skipped: [String] = []
        if let ucm, !state.ucmCandidates.isEmpty {
            // The fake cards, in a directory of their own for the helper's libasound.
            let directory = try Directory.makeTemporary(prefix: "audioroute-alsa-info")
            defer { try? Directory.removeTree(directory) }
            var text = (ucm.plugin.map { "ctl_type.audioroute_fakecard { lib \(Self.quoted($0)) }\n" } ?? "")
                + "ctl.!hw { @args [ CARD ] @args.CARD { type string } type audioroute_fakecard id $CARD }\n"
            for card in hardware {
                let rendered = FakeCardConfiguration.render(card)
                text += rendered.text + "\n"
                let id = card.record.attributes["id"] ?? card.record.sysname
                skipped += rendered.skipped.map { "\(id): \($0)" }
            }
            try AtomicFile.write(Array(text.utf8), to: directory + "/fake-cards.conf", durable: false)
            let helpers = UCMHelpers(
                executable: ucm.helper, ucmRoot: ucm.ucmRoot,
                environment: ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + directory + "/fake-cards.conf"], logger: logger)
            for answer in try helpers.answers(for: state.ucmCandidates) { _ = state.apply(.ucm(syspath: answer.syspath, card: answer.card)) }
        }
        explanations = state.explanations()
        ports = state.ports
        cards = Dictionary(hardware.map { ($0.record.syspath, $0) }) { first, _ in first }
        self.skipped = skipped
    }

    /// A path as an ALSA configuration string.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}
