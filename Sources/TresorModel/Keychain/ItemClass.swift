/// The four item classes of Apple's keychain (`kSecClass…`). Each is stored in its own table,
/// named as in Apple's keychain database.
public enum ItemClass: String, Codable, CaseIterable, Sendable {
    /// `kSecClassGenericPassword`: a password for a service and account.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword`: a password for a server, protocol, port and path.
    case internetPassword = "inet"
    /// `kSecClassCertificate`: a DER X.509 certificate (the item's data).
    case certificate = "cert"
    /// `kSecClassKey`: a cryptographic key (the item's data).
    case key = "keys"

    /// How the class reads in a sentence.
    public var humanName: String {
        switch self {
        case .genericPassword: return "generic password"
        case .internetPassword: return "internet password"
        case .certificate: return "certificate"
        case .key: return "key"
        }
    }
}

/// The limits of a keychain item, the same for the daemon and every client that checks first.
public enum ItemLimits {
    /// The largest secret an item holds (256 KiB: certificates, keys and passwords fit).
    public static let secretBytes = 256 * 1024
}
