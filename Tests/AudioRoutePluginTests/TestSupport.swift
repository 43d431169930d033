// The shared harness (temporary directories, child processes, file helpers)
// for every file of this target.
@_exported import AudioRouteTestKit
