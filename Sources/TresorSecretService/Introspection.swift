import TresorDBus

/// `org.freedesktop.DBus.Introspectable`: what each object answers, as D-Bus tools and
/// clients that introspect (python-dbus) read it. Items are not listed as children: which
/// items exist depends on who asks.
enum Introspection {
    static func xml(for path: String) throws -> String {
        let interfaces: String
        var children: [String] = []
        switch SecretObjectPath(path) {
        case .service?:
            interfaces = service
            children = ["collection", "aliases", "session", "prompt"]
        case .collection?: interfaces = collection
        case .item?: interfaces = item
        case .session?: interfaces = session
        case .prompt?: interfaces = prompt
        case nil:
            let parents = [
                "/": "org", "/org": "freedesktop", "/org/freedesktop": "secrets",
                SecretObjectPath.root + "/collection": "login session", SecretObjectPath.root + "/aliases": "default",
            ]
            guard let names = parents[path] else { throw DBusError.unknownObject(path) }
            interfaces = ""
            children = names.split(separator: " ").map(String.init)
        }
        let nodes = children.map { "  <node name=\"\($0)\"/>\n" }.joined()
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
            \(interfaces.isEmpty ? "" : standard)\(interfaces)\(nodes)</node>

            """
    }

    private static let standard = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect"><arg name="xml" type="s" direction="out"/></method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
            <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
            <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
            <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
          </interface>

        """

    private static let service = """
          <interface name="org.freedesktop.Secret.Service">
            <method name="OpenSession"><arg name="algorithm" type="s" direction="in"/><arg name="input" type="v" direction="in"/><arg name="output" type="v" direction="out"/><arg name="result" type="o" direction="out"/></method>
            <method name="CreateCollection"><arg name="properties" type="a{sv}" direction="in"/><arg name="alias" type="s" direction="in"/><arg name="collection" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="locked" type="ao" direction="out"/></method>
            <method name="Unlock"><arg name="objects" type="ao" direction="in"/><arg name="unlocked" type="ao" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <method name="Lock"><arg name="objects" type="ao" direction="in"/><arg name="locked" type="ao" direction="out"/><arg name="Prompt" type="o" direction="out"/></method>
            <method name="GetSecrets"><arg name="items" type="ao" direction="in"/><arg name="session" type="o" direction="in"/><arg name="secrets" type="a{o(oayays)}" direction="out"/></method>
            <method name="ReadAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="out"/></method>
            <method name="SetAlias"><arg name="name" type="s" direction="in"/><arg name="collection" type="o" direction="in"/></method>
            <property name="Collections" type="ao" access="read"/>
            <signal name="CollectionCreated"><arg name="collection" type="o"/></signal>
            <signal name="CollectionDeleted"><arg name="collection" type="o"/></signal>
            <signal name="CollectionChanged"><arg name="collection" type="o"/></signal>
          </interface>

        """

    private static let collection = """
          <interface name="org.freedesktop.Secret.Collection">
            <method name="Delete"><arg name="prompt" type="o" direction="out"/></method>
            <method name="SearchItems"><arg name="attributes" type="a{ss}" direction="in"/><arg name="results" type="ao" direction="out"/></method>
            <method name="CreateItem"><arg name="properties" type="a{sv}" direction="in"/><arg name="secret" type="(oayays)" direction="in"/><arg name="replace" type="b" direction="in"/><arg name="item" type="o" direction="out"/><arg name="prompt" type="o" direction="out"/></method>
            <property name="Items" type="ao" access="read"/>
            <property name="Label" type="s" access="readwrite"/>
            <property name="Locked" type="b" access="read"/>
            <property name="Created" type="t" access="read"/>
            <property name="Modified" type="t" access="read"/>
            <signal name="ItemCreated"><arg name="item" type="o"/></signal>
            <signal name="ItemDeleted"><arg name="item" type="o"/></signal>
            <signal name="ItemChanged"><arg name="item" type="o"/></signal>
          </interface>

        """

    private static let item = """
          <interface name="org.freedesktop.Secret.Item">
            <method name="Delete"><arg name="Prompt" type="o" direction="out"/></method>
            <method name="GetSecret"><arg name="session" type="o" direction="in"/><arg name="secret" type="(oayays)" direction="out"/></method>
            <method name="SetSecret"><arg name="secret" type="(oayays)" direction="in"/></method>
            <property name="Locked" type="b" access="read"/>
            <property name="Attributes" type="a{ss}" access="readwrite"/>
            <property name="Label" type="s" access="readwrite"/>
            <property name="Created" type="t" access="read"/>
            <property name="Modified" type="t" access="read"/>
          </interface>

        """

    private static let session = """
          <interface name="org.freedesktop.Secret.Session">
            <method name="Close"/>
          </interface>

        """

    private static let prompt = """
          <interface name="org.freedesktop.Secret.Prompt">
            <method name="Prompt"><arg name="window-id" type="s" direction="in"/></method>
            <method name="Dismiss"/>
            <signal name="Completed"><arg name="dismissed" type="b"/><arg name="result" type="v"/></signal>
          </interface>

        """
}
