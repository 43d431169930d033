// The laptop record the udev and --direct tests load into the umockdev testbed.
import AudioRouteCore
import Foundation

public enum IDs {
    public static let speaker = "pci-0000:00:1b.0/speaker"
    public static let mic = "pci-0000:00:1b.0/mic"
    public static let headphones = "pci-0000:00:1b.0/headphones"
    public static let headsetMic = "pci-0000:00:1b.0/headset-mic"
    public static let usbOut = "pci-0000:00:14.0-usb-0:11.4:1.0/output"
    public static let usbIn = "pci-0000:00:14.0-usb-0:11.4:1.0/input"
    public static let headsetCard = "/devices/pci0000:00/0000:00:14.0/usb1/1-11/1-11.4/1-11.4:1.0/sound/card2"
    public static let headsetUSB = "/devices/pci0000:00/0000:00:14.0/usb1/1-11/1-11.4"
    public static let laptopCard = "/devices/pci0000:00/0000:00:1b.0/sound/card0"
}

extension UmockdevTestbed {
    /// The laptop codec with its three jack switch devices, all unplugged unless
    /// `headphoneIn`; with `cardProperties` (udev properties) on its sound card.
    public func loadLaptop(headphoneIn: Bool = false, cardProperties: [String: String] = [:]) throws {
        try send("jackdev /dev/input/event8 40 0 HDA_Intel_Line_Out")
        try send("jackdev /dev/input/event9 4 \(headphoneIn ? 4 : 0) HDA_Intel_Front_Headphone")
        try send("jackdev /dev/input/event10 10 0 HDA_Intel_Front_Mic")
        if cardProperties.isEmpty {
            try load("hda-intel-laptop-with-jacks")
        } else {
            try load("hda-intel-laptop-with-jacks", properties: cardProperties, on: IDs.laptopCard)
        }
    }
}

public func events(_ objects: [JSON], from start: Int) -> [MonitorEvent] { objects.dropFirst(start).map(MonitorEvent.init) }

