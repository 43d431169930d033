// What `--version` prints on every binary: the release and the git commit it was built from
// (Plugins/GitCommit writes the commit; "-modified" when tracked files differed from it).

/// The version of AudioRoute's programs.
public enum AudioRouteVersion {
    /// The release.
    public static let release = "0.1.0"
    /// The git commit the build was made from, "unknown" outside a git checkout.
    public static var commit: String { audioRouteGitCommit }
    /// "0.1.0 (commit 1a2b3c4d5e6f)", as `--version` prints it after the program's name.
    public static var text: String { "\(release) (commit \(commit))" }
}
