// What the C plugin needs of the contract, generated from the one in Swift: the D-Bus names and
// signatures (Contract.swift), the interruption's words (Encoding.swift), the session's names
// (AudioRouteCore) and the route file's names and places (AlsaRouteConfig.swift). The plugin
// includes the generated header; `CContractTests` fails when the checked-in file and this differ,
// and `scripts/gen-c-contract` writes it again.
import AudioRouteCore

/// The C header of the contract (`Sources/AudioRoutePlugin/audioroute_contract.h`).
public enum CContract {
    /// Where the header is checked in, from the package's root.
    public static let path = "Sources/AudioRoutePlugin/audioroute_contract.h"

    /// The header's text, byte for byte.
    public static func header() -> String {
        var lines: [String] = [
            "// Generated from AudioRouteIPC's contract (Sources/AudioRouteIPC/CContract.swift) by",
            "// scripts/gen-c-contract. Do not edit: CContractTests fails when this file and the Swift",
            "// contract differ. docs/dbus-api.md explains the API; docs/alsa.md the route file.",
            "#ifndef AUDIOROUTE_CONTRACT_H",
            "#define AUDIOROUTE_CONTRACT_H",
            "",
            "// The daemon on the bus.",
            define("AR_BUS_NAME", DBusAPI.busName),
            define("AR_MANAGER_PATH", DBusAPI.managerPath),
            define("AR_SESSIONS_PATH", DBusAPI.sessionsPath),
            define("AR_MANAGER_INTERFACE", DBusAPI.managerInterface),
            define("AR_SESSION_INTERFACE", DBusAPI.sessionInterface),
            "",
            "// Methods: the name, then the signatures of the arguments (_IN) and of the reply (_OUT).",
        ]
        for method in DBusAPI.Manager.methods + DBusAPI.Session.methods {
            let name = "AR_METHOD_" + macroName(method.name)
            lines += [define(name, method.name), define(name + "_IN", method.input), define(name + "_OUT", method.output)]
        }
        lines += ["", "// Signals: the name, then the signature."]
        for signal in DBusAPI.Manager.signals + DBusAPI.Session.signals {
            let name = "AR_SIGNAL_" + macroName(signal.name)
            lines += [define(name, signal.name), define(name + "_SIGNATURE", signal.signature)]
        }
        lines += ["", "// An Interruption's kind and reason (the signal's first two arguments)."]
        for kind in [InterruptionType.began, .ended] { lines.append(define("AR_INTERRUPTION_" + macroName(kind.rawValue), kind.rawValue)) }
        for reason in [InterruptionReason.default, .routeDisconnected] {
            lines.append(define("AR_REASON_" + macroName(reason.rawValue), reason.rawValue))
        }
        lines += [
            "",
            "// The session's names, as the spec spells them, each list ending in NULL; the options' bits, in the same order.",
            list("AR_CATEGORY_NAMES", Category.allCases.map(\.rawValue)),
            list("AR_MODE_NAMES", Mode.allCases.map(\.rawValue)),
            list("AR_OPTION_NAMES", CategoryOptions.named.map(\.name)),
            "#define AR_OPTION_VALUES " + (CategoryOptions.named.map { "0x" + String($0.option.rawValue, radix: 16) } + ["0"]).joined(separator: ", "),
            "",
            "// The route file: the PCMs it defines, and where it is.",
            define("AR_ROUTE_OUTPUT_PCM", AlsaRouteConfig.outputPCM),
            define("AR_ROUTE_INPUT_PCM", AlsaRouteConfig.inputPCM),
            define("AR_ROUTE_FURTHER_OUTPUT_PCM_PREFIX", String(AlsaRouteConfig.furtherOutputPCM(1).dropLast())),
            "#define AR_MAX_OUTPUTS \(AlsaRouteConfig.maximumOutputs)",
            define("AR_ROUTE_FILE_IN_RUNTIME_DIRECTORY", String(RouteFileLocation.file(runtimeDirectory: "").dropFirst())),
            define("AR_ROUTE_FILE_SYSTEM", RouteFileLocation.system),
            "",
            "#endif",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    /// `OpenSession` → `OPEN_SESSION`; `routeDisconnected` → `ROUTE_DISCONNECTED`.
    static func macroName(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase && !out.isEmpty { out.append("_") }
            out += character.uppercased()
        }
        return out
    }

    static func define(_ name: String, _ value: String) -> String { "#define \(name) \(quoted(value))" }

    static func list(_ name: String, _ values: [String]) -> String {
        "#define \(name) " + (values.map(quoted) + ["NULL"]).joined(separator: ", ")
    }

    /// A C string literal; the contract's names are plain ASCII, escaped all the same.
    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
