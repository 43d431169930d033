import AudioRouteCore

// The introspection document the daemon serves: the standard interfaces, and the API's
// interface blocks cut verbatim from the checked-in XML (audioRouteIntrospectionXML).
extension DBusAPI {
    static let standardInterfaces = """
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="props" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <signal name="PropertiesChanged">
              <arg type="s" name="interface_name"/>
              <arg type="a{sv}" name="changed_properties"/>
              <arg type="as" name="invalidated_properties"/>
            </signal>
          </interface>

        """

    /// The `<interface name="...">…</interface>` block of `name` in the checked-in XML, verbatim.
    public static func interfaceBlock(_ name: String, in xml: String = audioRouteIntrospectionXML) -> String? {
        let opening = "  <interface name=\"\(name)\">"
        guard let start = xml.firstRange(ofText: opening) else { return nil }
        guard let end = xml[start.upperBound...].firstRange(ofText: "</interface>") else { return nil }
        return String(xml[start.lowerBound..<end.upperBound])
    }

    /// The introspection document of one object: the standard interfaces, the
    /// API's interface blocks taken verbatim from the checked-in XML, and child nodes.
    public static func introspection(interfaces: [String], children: [String]) -> String {
        var text = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>

            """
        text += standardInterfaces
        for interface in interfaces {
            if let block = interfaceBlock(interface) { text += block + "\n" }
        }
        for child in children { text += "  <node name=\"\(child)\"/>\n" }
        text += "</node>\n"
        return text
    }
}
