// Reads a card's ALSA UCM configuration through libasound's use-case API
// (snd_use_case_*): verbs, their devices, every value of each device. Read
// only: nothing here sets a verb or enables a device (docs/ucm.md).
import AudioRouteSystem
import CALSA

/// libasound's answer for an identifier the configuration does not define.
private let notDefined = -Errno.Code.noSuchFileOrDirectory.rawValue

/// An open UCM manager (snd_use_case_mgr_t), closed when it goes away.
public struct UCMManager: ~Copyable {
    let handle: OpaquePointer

    /// Opens the UCM configuration for `card`: "hw:<id>" for a card by its
    /// control device, or a card name, which libasound matches against the
    /// cards present (alsa-lib src/ucm/parser.c, uc_mgr_import_master_config).
    public init(card: String) throws(ALSAError) {
        var manager: OpaquePointer?
        try ALSAError.check(snd_use_case_mgr_open(&manager, card), "snd_use_case_mgr_open \(card)")
        handle = manager!
    }

    deinit { snd_use_case_mgr_close(handle) }

    /// The list libasound gives for `identifier` ("_verbs", "_devices/HiFi",
    /// "_identifiers/Speaker/HiFi"). Empty when the identifier names nothing.
    public func list(_ identifier: String) throws(ALSAError) -> [String] {
        var list: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        let count = snd_use_case_get_list(handle, identifier, &list)
        if count == notDefined { return [] }
        try ALSAError.check(count, "snd_use_case_get_list \(identifier)")
        guard let list, count > 0 else { return [] }
        defer { snd_use_case_free_list(list, count) }
        return (0..<Int(count)).map { list[$0].map { String(cString: $0) } ?? "" }
    }

    /// The value of `identifier` ("PlaybackPCM/Speaker/HiFi"), or nil when the
    /// configuration does not define it.
    public func value(_ identifier: String) throws(ALSAError) -> String? {
        var value: UnsafePointer<CChar>?
        let result = snd_use_case_get(handle, identifier, &value)
        if result == notDefined { return nil }
        try ALSAError.check(result, "snd_use_case_get \(identifier)")
        guard let value else { return nil }
        defer { audioroute_ucm_free_string(value) }
        return String(cString: value)
    }
}

/// Reads whole UCM configurations.
public enum UCMReader {
    /// Every verb of `card`'s configuration, with its devices and their values.
    public static func read(card: String) throws(ALSAError) -> UCMConfiguration {
        let manager = try UCMManager(card: card)
        var verbs: [UCMVerb] = []
        for (verb, verbComment) in pairs(try manager.list("_verbs")) {
            var devices: [UCMDevice] = []
            for (device, comment) in pairs(try manager.list("_devices/\(verb)")) {
                var values: [String: String] = [:]
                for key in try manager.list("_identifiers/\(device)/\(verb)") {
                    values[key] = try manager.value("\(key)/\(device)/\(verb)")
                }
                devices.append(UCMDevice(name: device, comment: comment, values: values))
            }
            verbs.append(UCMVerb(name: verb, comment: verbComment, devices: devices))
        }
        return UCMConfiguration(card: card, verbs: verbs)
    }

    /// "_verbs" and "_devices/…" lists are name, comment, name, comment, …
    private static func pairs(_ list: [String]) -> [(String, String)] {
        stride(from: 0, to: list.count - 1, by: 2).map { (list[$0], list[$0 + 1]) }
    }
}
