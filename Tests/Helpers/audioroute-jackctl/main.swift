// Test helper for the real-kernel bench: drives a jack on a real card through a user-space
// control element (SNDRV_CTL_IOCTL_ELEM_ADD), as a driver's `… Jack` control would change.
// The element stays on the card after this exits, until `remove` (or the card goes).
//
//   audioroute-jackctl CONTROL list               every element: numid, name, jack kind or -
//   audioroute-jackctl CONTROL add NAME [INDEX]   a writable boolean user element; prints its numid
//   audioroute-jackctl CONTROL set NUMID 0|1      writes its value (a value event follows)
//   audioroute-jackctl CONTROL remove NUMID
//
// CONTROL is /dev/snd/controlC<n>; add, set and remove need write access to it.

import AudioRouteSystem

func fail(_ message: String, status: Int32 = 1) -> Never {
    StandardStream.error.write("audioroute-jackctl: \(message)\n")
    CurrentProcess.exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: audioroute-jackctl CONTROL list|add NAME [INDEX]|set NUMID 0|1|remove NUMID", status: 2) }
let path = arguments[0]
do throws(Errno) {
    switch (arguments[1], arguments.count) {
    case ("list", 2):
        let device = try ALSAControlDevice(path: path)
        for id in try device.elementIDs() {
            let info = try device.info(numid: id.numid)
            let values = info.type == .boolean ? (try? device.booleanValues(numid: id.numid, count: Int(info.count))) : nil
            let value = values.map { $0.map { $0 ? "1" : "0" }.joined(separator: ",") } ?? "-"
            StandardStream.output.write("\(id.numid) \(id) boolean=\(info.type == .boolean) access=0x\(String(info.access.rawValue, radix: 16)) value=\(value)\n")
        }
    case ("add", 3), ("add", 4):
        guard let index = arguments.count == 4 ? UInt32(arguments[3]) : 0 else { fail("bad index \(arguments[3])", status: 2) }
        let device = try ALSAControlDevice(path: path, writable: true)
        StandardStream.output.write("\(try device.addBoolean(name: arguments[2], index: index))\n")
    case ("set", 4):
        guard let numid = UInt32(arguments[2]), arguments[3] == "0" || arguments[3] == "1" else { fail("usage: set NUMID 0|1", status: 2) }
        try ALSAControlDevice(path: path, writable: true).setBoolean(numid: numid, [arguments[3] == "1"])
    case ("remove", 3):
        guard let numid = UInt32(arguments[2]) else { fail("bad numid \(arguments[2])", status: 2) }
        try ALSAControlDevice(path: path, writable: true).removeElement(numid: numid)
    default:
        fail("unknown command \(arguments.dropFirst().joined(separator: " "))", status: 2)
    }
} catch {
    fail("\(path): \(error)")
}
