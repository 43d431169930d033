// The introspection data of dbus/org.audioroute.AudioRoute1.xml, embedded.
// The file is the source: a test fails if this copy differs from it by a byte,
// and another compares it with what the running daemon answers.

enum DBusInterfaceXML {
    /// The checked-in file, verbatim.
    static let text = """
<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<!-- AudioRoute's D-Bus API, version 1. docs/dbus-api.md explains every member.
     Bus name org.audioroute.AudioRoute1, object /org/audioroute/AudioRoute1;
     sessions at /org/audioroute/AudioRoute1/session/N.
     A port is (uid, type, direction, device, name, alsa, priority, sequence);
     a route is (outputs, inputs), each an array of ports. -->
<node>
  <interface name="org.audioroute.AudioRoute1">
    <!-- Changes are announced by the signals below, not by PropertiesChanged. -->
    <property name="Version" type="u" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="const"/>
    </property>
    <property name="Route" type="(a(ssssssit)a(ssssssit))" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="Ports" type="a(ssssssit)" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="SilentMode" type="b" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <!-- (path, owner's unique name, app name, category, mode, options, active) -->
    <property name="Sessions" type="a(ossssasb)" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <method name="OpenSession">
      <arg name="app" type="s" direction="in"/>
      <arg name="session" type="o" direction="out"/>
    </method>
    <method name="SetPortPriority">
      <arg name="uid" type="s" direction="in"/>
      <arg name="priority" type="i" direction="in"/>
    </method>
    <method name="SetSilentMode">
      <arg name="on" type="b" direction="in"/>
    </method>
    <!-- The rule that chose the outputs and the inputs, and per port why it won or lost. -->
    <method name="Explain">
      <arg name="output_rule" type="s" direction="out"/>
      <arg name="input_rule" type="s" direction="out"/>
      <arg name="ports" type="a(sas)" direction="out"/>
    </method>
    <signal name="RouteChanged">
      <arg name="reason" type="s"/>
      <arg name="previous" type="(a(ssssssit)a(ssssssit))"/>
      <arg name="current" type="(a(ssssssit)a(ssssssit))"/>
    </signal>
    <!-- change: added, removed or updated -->
    <signal name="PortsChanged">
      <arg name="change" type="s"/>
      <arg name="port" type="(ssssssit)"/>
    </signal>
    <signal name="SilentModeChanged">
      <arg name="on" type="b"/>
    </signal>
  </interface>
  <interface name="org.audioroute.Session1">
    <property name="Category" type="s" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="Mode" type="s" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="Options" type="as" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="Active" type="b" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="PreferredInput" type="s" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="OtherAudioPlaying" type="b" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <property name="SecondaryAudioShouldBeSilencedHint" type="b" access="read">
      <annotation name="org.freedesktop.DBus.Property.EmitsChangedSignal" value="false"/>
    </property>
    <method name="SetCategory">
      <arg name="category" type="s" direction="in"/>
      <arg name="mode" type="s" direction="in"/>
      <arg name="options" type="as" direction="in"/>
    </method>
    <method name="SetActive">
      <arg name="active" type="b" direction="in"/>
      <arg name="notify_others" type="b" direction="in"/>
    </method>
    <!-- none or speaker -->
    <method name="OverrideOutput">
      <arg name="override" type="s" direction="in"/>
    </method>
    <!-- "" clears the preference -->
    <method name="SetPreferredInput">
      <arg name="uid" type="s" direction="in"/>
    </method>
    <method name="SetPrefersInterruptionOnRouteDisconnect">
      <arg name="value" type="b" direction="in"/>
    </method>
    <method name="Close"/>
    <!-- Sent to the session's owner only. type: began or ended; reason: default,
         routeDisconnected (began only, else ""); should_resume: ended only. -->
    <signal name="Interruption">
      <arg name="type" type="s"/>
      <arg name="reason" type="s"/>
      <arg name="should_resume" type="b"/>
    </signal>
    <signal name="Ducked"/>
    <signal name="Unducked"/>
    <!-- type: begin or end -->
    <signal name="SilenceSecondaryAudioHint">
      <arg name="type" type="s"/>
    </signal>
    <signal name="Silenced"/>
    <signal name="Unsilenced"/>
  </interface>
</node>
"""

    /// One `<interface name="NAME">…</interface>` block of `text`, verbatim.
    static func interface(_ name: String) -> Substring {
        guard let start = find("<interface name=\"\(name)\">", in: text[...]),
            let close = find("</interface>", in: text[start...])
        else { return "" }
        return text[start..<text.index(close, offsetBy: "</interface>".count)]
    }

    /// The first index of `needle` in `haystack` (no Foundation here).
    private static func find(_ needle: String, in haystack: Substring) -> String.Index? {
        var index = haystack.startIndex
        while index < haystack.endIndex {
            if haystack[index...].hasPrefix(needle) { return index }
            index = haystack.index(after: index)
        }
        return nil
    }

    static let standard = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface" type="s" direction="in"/>
              <arg name="name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface" type="s" direction="in"/>
              <arg name="values" type="a{sv}" direction="out"/>
            </method>
          </interface>

        """

    static let header = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">

        """

    /// What Introspect answers on an object implementing `interface`, with `children` nodes.
    static func node(_ interface: String, children: [String] = []) -> String {
        header + "<node>\n" + standard + "  " + self.interface(interface) + "\n"
            + children.map { "  <node name=\"\($0)\"/>\n" }.joined() + "</node>\n"
    }

    static let emptyNode = header + "<node>\n" + standard + "</node>\n"
}
