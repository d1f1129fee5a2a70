import Synchronization
import TresorDBus
import TresorKeychain

/// Who is calling, as the daemon established it for one bus connection: the keychain caller
/// (its access groups) and the executable behind it, in words for the log and `tresor`.
public struct SecretServiceClient: Sendable {
    /// The access groups the client reads and writes; new items go to its default group.
    public var caller: Caller
    /// The executable, as `tresor secret-service owners` names it.
    public var executable: String
    /// Items of other groups the user granted this client one by one (keychain ids).
    public var grantedItems: [String]
    /// Set when the identity could not be settled yet (the application registry opens only
    /// after the first unlock): it is used for this call and asked again for the next.
    public var isProvisional: Bool
    /// Whether the executable is a generic client (`TresorModel.GenericClients`): any process of the user
    /// can run it with arguments of its choosing, so its group proves nothing about who asks.
    public var isGenericClient: Bool
    /// The executable's own group, by which the user's trust in a generic client is kept.
    public var ownGroup: String
    /// The own group of each ancestor of the process, its parent first, up to the leader of its
    /// login session: what an approval "for this session" remembers beside the executable.
    /// Read when first asked for, when it was given as a reading (a generic client the user
    /// granted ahead of time never needs it).
    public var parentChain: [String] {
        get { chain.value }
        set { chain = ParentChain(newValue) }
    }
    private var chain: ParentChain
    /// `userPresence` items the user approved for this client in an `Unlock` prompt, each good
    /// for one read of its secret (set by the provider for the call at hand).
    var approvedItems: Set<String> = []
    /// The process the bus named for the client's connection when it was identified (set by the
    /// provider; shown to the user when the client asks for an item that needs them).
    public internal(set) var pid: Int32?
    /// Set by the provider for the call at hand: a generic client the user does not trust now,
    /// whose every secret is read, replaced or deleted only with the user's approval, as a
    /// `userPresence` item's is read.
    var needsApproval = false

    /// Whether reading, replacing or deleting item `id` needs the user's approval first, whatever
    /// the item's own access control says.
    func mustAsk(for id: String) -> Bool { needsApproval && !approvedItems.contains(id) }

    /// The refusal of a read or change the client must ask for (``mustAsk(for:)``), saying what
    /// the user can do — the keybag may well be unlocked.
    var lockedForAGenericClient: DBusError {
        DBusError(
            SecretError.isLocked,
            "this program is one any program of yours can run (a generic client): it reads and changes its items with your approval — "
                + "Unlock the item and allow it in the desktop's prompter or `tresor approve`, "
                + "or trust the program: `tresor secret-service trust add \(executable)`")
    }

    /// - Parameters:
    ///   - caller: the client's access groups.
    ///   - executable: the executable's path, for people.
    ///   - grantedItems: items of other groups granted one by one.
    ///   - isProvisional: whether to ask again on the next call.
    ///   - isGenericClient: whether the executable is a generic client.
    ///   - ownGroup: the executable's own group (its default group when not given).
    ///   - parentChain: the ancestors' own groups, the parent first.
    ///   - readParentChain: reads them when first needed, instead of `parentChain`.
    public init(
        caller: Caller, executable: String, grantedItems: [String] = [], isProvisional: Bool = false, isGenericClient: Bool = false,
        ownGroup: String? = nil, parentChain: [String] = [], readParentChain: (@Sendable () -> [String])? = nil
    ) {
        self.caller = caller
        self.executable = executable
        self.grantedItems = grantedItems
        self.isProvisional = isProvisional
        self.isGenericClient = isGenericClient
        self.ownGroup = ownGroup ?? caller.defaultAccessGroup
        chain = readParentChain.map(ParentChain.init(reading:)) ?? ParentChain(parentChain)
    }
}

/// A client's parent chain, given or read once when first needed (shared by the copies of the
/// client, as the connection's identity is).
private final class ParentChain: Sendable {
    private let chain: Mutex<[String]?>
    private let read: (@Sendable () -> [String])?

    init(_ chain: [String]) {
        self.chain = Mutex(chain)
        read = nil
    }

    init(reading read: @escaping @Sendable () -> [String]) {
        chain = Mutex(nil)
        self.read = read
    }

    var value: [String] {
        chain.withLock { chain in
            if let chain { return chain }
            let read = read?() ?? []
            chain = read
            return read
        }
    }
}

/// Identifies the process behind a bus connection: the daemon's rules for executables
/// (registered applications, executables identified by path or by hash, the user's grants).
public typealias SecretServiceIdentifier = @Sendable (_ pid: Int32) throws -> SecretServiceClient
