// The plugin's C header against the Swift contract it is generated from.
import AudioRouteIPC
import AudioRouteTestKit
import Glibc
import Testing

@Suite struct CContractTests {
    /// The checked-in header is what the contract generates now: a name or signature changed in
    /// Swift and not in C (or edited by hand in C) fails here. `scripts/gen-c-contract` writes it.
    @Test func theCheckedInHeaderIsTheContracts() throws {
        let path = Subprocess.packageRoot + "/" + CContract.path
        let generated = CContract.header()
        if let value = getenv("AUDIOROUTE_REGENERATE"), String(cString: value) == "1" { try writeText(path, generated) }
        let checkedIn = try readText(path)
        #expect(checkedIn == generated, "\(CContract.path) differs from the contract: run scripts/gen-c-contract")
    }

    /// What the plugin relies on is in it, spelled as the daemon spells it.
    @Test func theHeaderCarriesWhatThePluginUses() {
        let header = CContract.header()
        for line in [
            #"#define AR_BUS_NAME "org.audioroute.AudioRoute1""#,
            #"#define AR_METHOD_OPEN_SESSION "OpenSession""#,
            #"#define AR_METHOD_OPEN_SESSION_IN "s""#,
            #"#define AR_METHOD_SET_ACTIVE_IN "bb""#,
            #"#define AR_SIGNAL_INTERRUPTION_SIGNATURE "ssb""#,
            #"#define AR_REASON_ROUTE_DISCONNECTED "routeDisconnected""#,
            #"#define AR_ROUTE_FILE_IN_RUNTIME_DIRECTORY "audioroute/asound.conf""#,
            #"#define AR_ROUTE_FILE_SYSTEM "/run/audioroute/asound.conf""#,
        ] {
            #expect(header.contains(line + "\n"), "missing: \(line)")
        }
        #expect(header.contains(#"#define AR_CATEGORY_NAMES "ambient", "soloAmbient", "playback", "record", "playAndRecord", "multiRoute", "audioProcessing", NULL"#))
    }
}
