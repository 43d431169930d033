// The git commit the binaries were built from, for `--version`: a prebuild command writes
// `Commit.swift` (one constant) into AudioRouteVersion's generated sources before each build,
// and rewrites it only when the commit changes, so that nothing recompiles otherwise. Outside a
// git checkout (a source tarball) the commit is "unknown".
import Foundation
import PackagePlugin

@main
struct GitCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "Commit")
        let script = """
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
            if [ "$commit" != unknown ] && [ -n "$(git -C "$1" status --porcelain --untracked-files=no 2>/dev/null | head -1)" ]; then
              commit="$commit-modified"
            fi
            mkdir -p "$2"
            line="let audioRouteGitCommit = \\"$commit\\""
            [ "$(cat "$2/Commit.swift" 2>/dev/null)" = "$line" ] || printf '%s\\n' "$line" > "$2/Commit.swift"
            """
        return [
            .prebuildCommand(
                displayName: "The git commit for --version",
                executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "git-commit", context.package.directoryURL.path, output.path],
                outputFilesDirectory: output)
        ]
    }
}
