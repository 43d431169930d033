// The process's environment, without Foundation. (The same as the CLI branch's file, which
// has more: at the merge, take that one.)
import Glibc

/// This process's environment.
public enum Environment {
    /// Every variable (environ), by name.
    public static var variables: [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }
}
