// Reads a card's ALSA UCM configuration through libasound's use-case API
// (snd_use_case_*): verbs, their devices, every value of each device. Read
// only: setting a verb or a device is UCMApply.swift's (docs/ucm.md).
import AudioRouteCore
import AudioRouteSystem
import CALSA

/// libasound's answer for an identifier the configuration does not define.
private let notDefined = -Errno.Code.noSuchFileOrDirectory.rawValue

/// An open UCM manager (snd_use_case_mgr_t), closed when it goes away.
public struct UCMManager: ~Copyable {
    let handle: OpaquePointer
    /// The name it was opened with ("hw:PinePhone").
    public let card: String
    /// The verb and devices this manager has set (`apply`, UCMApply.swift); no verb
    /// and no device when it opens: libasound starts every manager so.
    public internal(set) var state = UCMState()
    /// What the last `apply` could not unmute (a device's `PlaybackSwitch`/`CaptureSwitch` that
    /// the card does not have, or refused), one line each; the device is enabled all the same.
    public internal(set) var unmuteFailures: [String] = []

    /// Opens the UCM configuration for `card`: "hw:<id>" for a card by its
    /// control device, or a card name, which libasound matches against the
    /// cards present (alsa-lib src/ucm/parser.c, uc_mgr_import_master_config).
    public init(card: String) throws(ALSAError) {
        var manager: OpaquePointer?
        try ALSAError.check(snd_use_case_mgr_open(&manager, card), "snd_use_case_mgr_open \(card)")
        handle = manager!
        self.card = card
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
        try read(UCMManager(card: card))
    }

    /// Every verb of `manager`'s configuration, with its devices and their values.
    public static func read(_ manager: borrowing UCMManager) throws(ALSAError) -> UCMConfiguration {
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
        return UCMConfiguration(card: manager.card, verbs: verbs)
    }

    /// "_verbs" and "_devices/…" lists are name, comment, name, comment, …
    static func pairs(_ list: [String]) -> [(String, String)] {
        stride(from: 0, to: list.count - 1, by: 2).map { (list[$0], list[$0 + 1]) }
    }
}
